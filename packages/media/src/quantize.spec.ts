import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunProcess } from './process-runner';
import { prepareModel, readModelFtype } from './quantize';

/** A ggml header: magic, 10 hparams, then ftype. */
function model(path: string, ftype: number): string {
  const header = Buffer.alloc(64);
  header.writeUInt32LE(0x67676d6c, 0);
  header.writeInt32LE(ftype, 44);
  writeFileSync(path, header);
  return path;
}

describe('prepareModel', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hark-quantize-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Stands in for whisper-quantize: writes the output file it is given. */
  const fakeQuantize = () => {
    const calls: (readonly string[])[] = [];
    const run: RunProcess = async (_command, args) => {
      calls.push(args);
      writeFileSync(args[1] as string, 'quantised');
      return { stdout: '', stderr: '', durationMs: 1 };
    };
    return { run, calls };
  };

  it('makes a quantised copy once, then reuses it', async () => {
    const source = model(join(dir, 'ggml-base.bin'), 1);
    const { run, calls } = fakeQuantize();
    const options = {
      modelPath: source,
      quantize: 'q8_0' as const,
      quantizeBin: '/bin/wq',
      cacheDir: join(dir, 'c'),
      run,
    };

    const first = await prepareModel(options);
    expect(first).toEqual({ path: join(dir, 'c', 'ggml-base-q8_0.bin'), outcome: 'made' });
    expect(calls).toEqual([[source, expect.stringContaining('ggml-base-q8_0.bin.'), 'q8_0']]);
    expect(readFileSync(first.path, 'utf8')).toBe('quantised');

    await expect(prepareModel(options)).resolves.toEqual({ path: first.path, outcome: 'cached' });
    expect(calls).toHaveLength(1);
  });

  it('uses the model as it is when quantising is off or it is already quantised', async () => {
    const f16 = model(join(dir, 'a.bin'), 1);
    const q8 = model(join(dir, 'b.bin'), 2007);
    const { run, calls } = fakeQuantize();
    const base = { quantizeBin: '/bin/wq', cacheDir: dir, run };
    await expect(prepareModel({ ...base, modelPath: f16, quantize: 'off' })).resolves.toEqual({
      path: f16,
      outcome: 'off',
    });
    await expect(prepareModel({ ...base, modelPath: q8, quantize: 'q8_0' })).resolves.toEqual({
      path: q8,
      outcome: 'already-quantised',
    });
    expect(calls).toEqual([]);
    await expect(readModelFtype(q8)).resolves.toBe(7);
  });

  it('throws when whisper-quantize fails, leaving no partial file', async () => {
    const source = model(join(dir, 'ggml-base.bin'), 1);
    const run: RunProcess = async (_c, args) => {
      writeFileSync(args[1] as string, 'half');
      throw new Error('whisper-quantize exited 1');
    };
    await expect(
      prepareModel({
        modelPath: source,
        quantize: 'q5_1',
        quantizeBin: '/bin/wq',
        cacheDir: join(dir, 'c'),
        run,
      }),
    ).rejects.toThrow('exited 1');
    expect(readdirSync(join(dir, 'c'))).toEqual([]);
  });

  it('refuses a file that is not a ggml model', async () => {
    writeFileSync(join(dir, 'x.bin'), Buffer.alloc(64));
    await expect(readModelFtype(join(dir, 'x.bin'))).rejects.toThrow('not a ggml model');
  });
});
