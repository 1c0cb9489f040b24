import {
  copyFileSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAKE_TENSORS, writeGgmlModel } from './__fixtures__/ggml-model';
import type { RunProcess } from './process-runner';
import { prepareModel, readModelFtype } from './quantize';

describe('prepareModel', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hark-quantize-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * Stands in for whisper-quantize: writes a copy of the model to the output it is given (the
   * same tensors; their types do not matter to the check), cut to `keep` bytes when set, and
   * exits 0 either way, as whisper-quantize does when its writes fail.
   */
  const fakeQuantize = (keep?: (size: number) => number) => {
    const calls: (readonly string[])[] = [];
    const run: RunProcess = async (_command, args) => {
      calls.push(args);
      const [from, to] = args as [string, string];
      copyFileSync(from, to);
      if (keep) truncateSync(to, keep(statSync(to).size));
      return { stdout: '', stderr: '', durationMs: 1 };
    };
    return { run, calls };
  };
  const setup = (run: RunProcess) => ({
    modelPath: writeGgmlModel(join(dir, 'ggml-base.bin'), 1),
    quantize: 'q8_0' as const,
    quantizeBin: '/bin/wq',
    cacheDir: join(dir, 'c'),
    run,
  });
  const copyPath = () => join(dir, 'c', 'ggml-base-q8_0.bin');

  it('makes a quantised copy once, then reuses it', async () => {
    const { run, calls } = fakeQuantize();
    const options = setup(run);

    const first = await prepareModel(options);
    expect(first).toEqual({ path: copyPath(), outcome: 'made' });
    expect(calls).toEqual([[options.modelPath, expect.stringContaining('ggml-base-q8_0.bin.'), 'q8_0']]);
    expect(readFileSync(first.path)).toEqual(readFileSync(options.modelPath));

    await expect(prepareModel(options)).resolves.toEqual({ path: first.path, outcome: 'cached' });
    expect(calls).toHaveLength(1);
  });

  it('uses the model as it is when quantising is off or it is already quantised', async () => {
    const f16 = writeGgmlModel(join(dir, 'a.bin'), 1);
    const q8 = writeGgmlModel(join(dir, 'b.bin'), 2007);
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
    const run: RunProcess = async (_c, args) => {
      writeFileSync(args[1] as string, 'half');
      throw new Error('whisper-quantize exited 1');
    };
    await expect(prepareModel({ ...setup(run), quantize: 'q5_1' })).rejects.toThrow('exited 1');
    expect(readdirSync(join(dir, 'c'))).toEqual([]);
  });

  it.each([
    ['inside a tensor', (size: number) => size - 100],
    ['inside the vocabulary', () => 110],
    ['after a whole tensor (the last one missing)', (size: number) => size - 3 * 64 * 2 - 12 - 4 * 2 - 30],
  ])(
    'whisper-quantize exits 0 with a copy cut short %s (a write failed): nothing kept or stamped, and the next start makes it',
    async (_where, keep) => {
      const cut = fakeQuantize(keep);
      const options = setup(cut.run);
      await expect(prepareModel(options)).rejects.toThrow(/incomplete copy/);
      expect(readdirSync(join(dir, 'c'))).toEqual([]);

      const whole = fakeQuantize();
      await expect(prepareModel({ ...options, run: whole.run })).resolves.toEqual({
        path: copyPath(),
        outcome: 'made',
      });
    },
  );

  it('a kept copy cut short after it was stamped is made again, not trusted (every job would fail)', async () => {
    const { run, calls } = fakeQuantize();
    const options = setup(run);
    await prepareModel(options);
    truncateSync(copyPath(), statSync(copyPath()).size - 64);

    const again = await prepareModel(options);
    expect(again).toEqual({ path: copyPath(), outcome: 'remade', rejected: expect.stringMatching(/bytes/) });
    expect(calls).toHaveLength(2);
    expect(readFileSync(copyPath())).toEqual(readFileSync(options.modelPath));
    await expect(prepareModel(options)).resolves.toMatchObject({ outcome: 'cached' });
  });

  it("a kept copy missing its last tensor under a stamp of its own length (an older version's stamp) is made again", async () => {
    const { run } = fakeQuantize();
    const options = setup(run);
    await prepareModel(options);
    // What an older version stamped: the copy as whisper-quantize left it, one tensor short.
    writeGgmlModel(copyPath(), 8, FAKE_TENSORS.slice(0, -1));
    const stampPath = `${copyPath()}.stamp`;
    const stamp = JSON.parse(readFileSync(stampPath, 'utf8')) as { bytes: number };
    writeFileSync(stampPath, JSON.stringify({ ...stamp, bytes: statSync(copyPath()).size }));

    await expect(prepareModel(options)).resolves.toMatchObject({
      outcome: 'remade',
      rejected: expect.stringMatching(/2 tensors, the model 3/),
    });
  });

  it("an older version's plain-text stamp is not trusted: the copy is made again", async () => {
    const { run, calls } = fakeQuantize();
    const options = setup(run);
    await prepareModel(options);
    const s = statSync(options.modelPath);
    writeFileSync(`${copyPath()}.stamp`, `${options.modelPath} ${s.size} ${s.mtimeMs} q8_0`);
    await expect(prepareModel(options)).resolves.toMatchObject({ outcome: 'made' });
    expect(calls).toHaveLength(2);
  });

  it('each make writes under a name of its own (workers sharing a cache folder), and removes it', async () => {
    const { run, calls } = fakeQuantize();
    const options = setup(run);
    await Promise.all([prepareModel(options), prepareModel(options)]);
    expect(calls).toHaveLength(2);
    expect(calls[0]![1]).not.toBe(calls[1]![1]);
    expect(readdirSync(join(dir, 'c')).sort()).toEqual(['ggml-base-q8_0.bin', 'ggml-base-q8_0.bin.stamp']);
  });

  it('refuses a file that is not a ggml model', async () => {
    writeFileSync(join(dir, 'x.bin'), Buffer.alloc(64));
    await expect(readModelFtype(join(dir, 'x.bin'))).rejects.toThrow('not a ggml model');
  });
});
