import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MediaAbortError, WhisperEngine, decodeToWav, pcmWav, runProcess, type RunProcess } from '../src';
import { ensureWhisperBuilt, isAlive, scratchDir, testEnv } from './media-test-env';

// The test models load and run but transcribe to nothing, so these tests cover the process
// contract (arguments, output file, language, errors, cancel); words are covered by the parser
// tests against fixtures in the writer's exact format.
jest.setTimeout(60_000);

describe('WhisperEngine (real whisper-cli)', () => {
  const { dir, cleanup } = scratchDir();
  let binaryPath = '';
  const pids: number[] = [];
  // The real runner, recording each child's pid for the cancel test.
  const run: RunProcess = (command, args, options) =>
    runProcess(command, args, { ...options, onSpawn: (pid) => pids.push(pid) });
  const engine = (overrides: { modelPath?: string; tmpDir?: string } = {}) =>
    new WhisperEngine({
      binaryPath,
      modelPath: testEnv.whisperModel,
      threads: 2,
      modelName: 'whisper-base',
      run,
      ...overrides,
    });

  beforeAll(() => {
    binaryPath = ensureWhisperBuilt();
  }, 15 * 60_000);
  afterAll(cleanup);

  it('transcribes a decoded file to an empty result with the model language', async () => {
    const { outputPath } = await decodeToWav(testEnv.jfkWav, join(dir, 'jfk.wav'));
    const started = Date.now();
    const result = await engine({ tmpDir: dir }).transcribe({ wavPath: outputPath, language: null });
    console.log(`whisper-cli on jfk.wav (11 s), 2 threads, test model: ${Date.now() - started} ms`);

    expect(result).toEqual({ language: 'en', words: [], segments: [], text: '' });
    // Its per-run output folder is removed.
    expect(readdirSync(dir).filter((f) => f.startsWith('hark-whisper-'))).toEqual([]);
  });

  it('transcribes audio of one sample to nothing instead of failing to detect its language', async () => {
    // 1 sample at 16 kHz: unpadded, whisper-cli exits 10 ("failed to auto-detect language").
    const path = join(dir, 'one-sample.wav');
    writeFileSync(path, pcmWav(Buffer.from([0xe8, 0x03])));
    const { outputPath, durationSeconds } = await decodeToWav(path, join(dir, 'one-decoded.wav'));
    expect(durationSeconds).toBe(1 / 16000);
    for (const modelPath of [testEnv.whisperModel, testEnv.whisperMultilingualModel]) {
      const result = await engine({ modelPath, tmpDir: dir }).transcribe({
        wavPath: outputPath,
        language: null,
      });
      expect(result).toMatchObject({ words: [], segments: [], text: '' });
      expect(result.language).toMatch(/^[a-z]{2,3}$/);
    }
    expect(readdirSync(dir).filter((f) => f.startsWith('hark-whisper-'))).toEqual([]);
  });

  it('detects a language with a multilingual model, and honours a requested one', async () => {
    const multilingual = engine({ modelPath: testEnv.whisperMultilingualModel });
    const detected = await multilingual.transcribe({ wavPath: testEnv.jfkWav });
    expect(detected.language).toMatch(/^[a-z]{2,3}$/);
    expect(detected.language).not.toBe('auto');
    await expect(multilingual.transcribe({ wavPath: testEnv.jfkWav, language: 'de' })).resolves.toMatchObject(
      { language: 'de' },
    );
  });

  it('fails permanently with stderr attached when the model cannot be loaded', async () => {
    const failure = engine({ modelPath: join(dir, 'missing-model.bin') }).transcribe({
      wavPath: testEnv.jfkWav,
    });
    await expect(failure).rejects.toMatchObject({
      name: 'MediaError',
      code: 'engine_failed',
      transient: false,
    });
    await expect(failure).rejects.toMatchObject({ stderr: expect.stringMatching(/failed to/) as unknown });
  });

  it('fails with engine_failed when whisper-cli writes no output (unreadable audio)', async () => {
    const failure = engine().transcribe({ wavPath: join(dir, 'missing.wav') });
    await expect(failure).rejects.toMatchObject({ code: 'engine_failed', transient: false });
  });

  it('fails permanently on an unknown language', async () => {
    const failure = engine({ modelPath: testEnv.whisperMultilingualModel }).transcribe({
      wavPath: testEnv.jfkWav,
      language: 'xx',
    });
    await expect(failure).rejects.toMatchObject({
      code: 'engine_failed',
      transient: false,
      message: expect.stringMatching(/unknown language/) as unknown,
    });
  });

  it('gives the prompt to the model through a file, never on the command line', async () => {
    const { outputPath } = await decodeToWav(testEnv.jfkWav, join(dir, 'jfk-prompt.wav'));
    const commands: string[][] = [];
    const recording: RunProcess = (command, args, options) => {
      commands.push([...args]);
      return run(command, args, options);
    };
    const base = (prompt: string | null) =>
      new WhisperEngine({
        binaryPath,
        modelPath: testEnv.baseModel,
        threads: 2,
        modelName: 'whisper-base',
        run: recording,
      })
        .transcribe({ wavPath: outputPath, language: 'en', prompt })
        .then((r) => r.text.trim());
    // The real base model follows a prompt's style: no capitals, no punctuation.
    const prompt = 'i was like so um yeah whatever lol no caps no punctuation';
    expect(await base(null)).toMatch(/^And so,? my fellow Americans/);
    expect(await base(prompt)).toBe(
      'and so my fellow americans ask not what your country can do for you ask what you can do for your country',
    );
    // One run each (no fallback to --prompt), the prompt's words on neither command line.
    expect(commands).toHaveLength(2);
    expect(commands[1]).toContain('--prompt-file');
    for (const args of commands) expect(args.join(' ')).not.toContain('whatever');
  });

  it('cancel: abort kills the engine process within a second', async () => {
    const controller = new AbortController();
    pids.length = 0;
    const running = engine().transcribe({ wavPath: testEnv.speech60Wav, signal: controller.signal });
    await new Promise((r) => setTimeout(r, 300));
    const [pid] = pids;
    expect(pid).toBeDefined();
    expect(isAlive(pid as number)).toBe(true);

    const abortedAt = Date.now();
    controller.abort();
    const error = await running.catch((e: unknown) => e);
    const rejectedAfter = Date.now() - abortedAt;
    console.log(`cancel: rejected ${rejectedAfter} ms after abort`);
    expect(error).toBeInstanceOf(MediaAbortError);
    expect(rejectedAfter).toBeLessThan(1000);
    expect(isAlive(pid as number)).toBe(false);
  });
});
