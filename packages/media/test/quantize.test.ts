import { chmodSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { prepareModel, readModelHeader } from '../src';
import { checkModelCopy, readModelLayout } from '../src/model-layout';
import { ensureWhisperBuilt, scratchDir, testEnv } from './media-test-env';

// The real whisper-quantize on the real base model (2 s a make).
jest.setTimeout(60_000);

describe('prepareModel (real whisper-quantize)', () => {
  const { dir, cleanup } = scratchDir();
  let quantizeBin = '';
  beforeAll(() => {
    quantizeBin = join(dirname(ensureWhisperBuilt()), 'whisper-quantize');
  }, 15 * 60_000);
  afterAll(cleanup);

  it('whisper-quantize writing to a full disk (/dev/full) exits 0; the copy is refused, nothing is kept or stamped', async () => {
    // Its output is a link to /dev/full: every write fails with ENOSPC, as on a disk that filled up.
    const full = join(dir, 'quantize-to-dev-full');
    writeFileSync(full, `#!/bin/sh\nln -s /dev/full "$2"\nexec '${quantizeBin}' "$@"\n`);
    chmodSync(full, 0o755);
    const cacheDir = join(dir, 'full-cache');
    await expect(
      prepareModel({ modelPath: testEnv.baseModel, quantize: 'q8_0', quantizeBin: full, cacheDir }),
    ).rejects.toThrow(/whisper-quantize wrote an incomplete copy/);
    expect(readdirSync(cacheDir)).toEqual([]);
  });

  it('makes a whole q8_0 copy: every tensor of the model, the matrices quantised', async () => {
    const cacheDir = join(dir, 'cache');
    const made = await prepareModel({
      modelPath: testEnv.baseModel,
      quantize: 'q8_0',
      quantizeBin,
      cacheDir,
    });
    expect(made.outcome).toBe('made');
    await expect(checkModelCopy(testEnv.baseModel, made.path)).resolves.toBeNull();
    expect((await readModelHeader(made.path)).ftype).toBe(7);
    const types = new Set((await readModelLayout(made.path)).tensors.map((t) => t.type));
    expect(types.has(8)).toBe(true);
    await expect(
      prepareModel({ modelPath: testEnv.baseModel, quantize: 'q8_0', quantizeBin, cacheDir }),
    ).resolves.toMatchObject({ outcome: 'cached' });
  });
});
