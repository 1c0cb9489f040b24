import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { readWavDuration } from './decode';
import { MediaAbortError, MediaError } from './media-error';
import { ProcessError, type RunOptions, type RunProcess } from './process-runner';
import { DEFAULT_DECODING, DEFAULT_VAD, WhisperEngine, decodingArgs, vadArgs } from './whisper';

const jfk = readFileSync(join(__dirname, '__fixtures__', 'whisper-full-jfk.en.ojf.txt'), 'utf8');

interface Call {
  command: string;
  args: readonly string[];
  options: RunOptions | undefined;
}

/** Stands in for whisper-cli: records the call and writes `output` where -of says. */
function fakeRun(output: string | null, outcome: { stderr?: string; error?: Error } = {}) {
  const calls: Call[] = [];
  const run: RunProcess = async (command, args, options) => {
    calls.push({ command, args, options });
    if (outcome.error) throw outcome.error;
    const prefix = args[args.indexOf('-of') + 1] as string;
    if (output !== null) writeFileSync(`${prefix}.json`, output);
    return { stdout: '', stderr: outcome.stderr ?? '', durationMs: 1 };
  };
  return { run, calls };
}

const engine = (run: RunProcess) =>
  new WhisperEngine({
    binaryPath: '/opt/whisper-cli',
    modelPath: '/models/base.bin',
    threads: 3,
    modelName: 'whisper-base',
    run,
  });

describe('WhisperEngine', () => {
  it('runs whisper-cli with full JSON output and auto language, and parses the result', async () => {
    const { run, calls } = fakeRun(jfk);
    const result = await engine(run).transcribe({ wavPath: '/tmp/a.wav', language: null });

    expect(result.language).toBe('en');
    expect(result.words).toHaveLength(22);
    const [call] = calls;
    expect(call?.command).toBe('/opt/whisper-cli');
    const prefix = call?.args[call.args.indexOf('-of') + 1] as string;
    expect(call?.args).toEqual([
      '-m',
      '/models/base.bin',
      '-f',
      '/tmp/a.wav',
      '-t',
      '3',
      '-l',
      'auto',
      ...decodingArgs(DEFAULT_DECODING),
      '-ojf',
      '-of',
      prefix,
    ]);
    expect(call?.options?.captureStdout).toBe(false);
    // The per-run output folder is gone afterwards.
    expect(existsSync(dirname(prefix))).toBe(false);
  });

  it('passes a requested language and the abort signal through', async () => {
    const { run, calls } = fakeRun(jfk);
    const signal = new AbortController().signal;
    await engine(run).transcribe({ wavPath: '/tmp/a.wav', language: 'de', signal });
    expect(calls[0]?.args.slice(6, 8)).toEqual(['-l', 'de']);
    expect(calls[0]?.options?.signal).toBe(signal);
  });

  it('passes the decoding options: beam, best-of, non-speech suppression, a fitted audio context', async () => {
    const { run, calls } = fakeRun(jfk);
    const make = (decoding: Partial<typeof DEFAULT_DECODING>) =>
      new WhisperEngine({
        binaryPath: 'x',
        modelPath: 'y',
        threads: 1,
        modelName: 'z',
        run,
        decoding: { transcribe: decoding },
      });
    await make({}).transcribe({ wavPath: '/tmp/a.wav' });
    await make({
      beamSize: 5,
      bestOf: 2,
      suppressNonSpeech: false,
      audioContextMargin: 0,
      decodeThreads: 0,
    }).transcribe({
      wavPath: '/tmp/a.wav',
    });
    const decodingOf = (args: readonly string[]) => args.slice(8, args.indexOf('-ojf'));
    // The defaults measured in bench/engine: greedy, best-of 5 at fallback, -sns, -ac -640.
    expect(decodingOf(calls[0]!.args)).toEqual(['-bs', '1', '-bo', '5', '-sns', '-ac', '-640']);
    expect(decodingOf(calls[1]!.args)).toEqual(['-bs', '5', '-bo', '2']);
    // The decoder's threads go through the environment (whisper-cli has no flag for them).
    expect(calls[0]!.options?.env).toEqual({ WHISPER_DECODE_THREADS: '1' });
    expect(calls[1]!.options?.env).toEqual({});
  });

  it('rejects beam sizes and best-of counts outside 1-16, margins outside 0-1500', () => {
    const make =
      (decoding: {
        beamSize?: number;
        bestOf?: number;
        audioContextMargin?: number;
        decodeThreads?: number;
      }) =>
      (task: 'transcribe' | 'translate' = 'transcribe') =>
        new WhisperEngine({
          binaryPath: 'x',
          modelPath: 'y',
          threads: 1,
          modelName: 'z',
          decoding: { [task]: decoding },
        });
    expect(make({ beamSize: 0 })).toThrow(RangeError);
    expect(make({ bestOf: 17 })).toThrow(RangeError);
    expect(make({ beamSize: 1.5 })).toThrow(RangeError);
    expect(make({ audioContextMargin: -1 })).toThrow(RangeError);
    expect(make({ decodeThreads: -1 })).toThrow(RangeError);
    expect(() => make({ audioContextMargin: 1501 })('translate')).toThrow(RangeError);
    expect(make({ beamSize: 16, bestOf: 1, audioContextMargin: 0 })).not.toThrow();
  });

  it('passes translate, the initial prompt (in a file) and the temperature through', async () => {
    const { run: fake, calls } = fakeRun(jfk);
    const prompts: { text: string; mode: number }[] = [];
    const run: RunProcess = async (command, args, options) => {
      const at = args.indexOf('--prompt-file');
      if (at >= 0) {
        const path = args[at + 1]!;
        prompts.push({ text: readFileSync(path, 'utf8'), mode: statSync(path).mode & 0o777 });
      }
      return fake(command, args, options);
    };
    const translating = new WhisperEngine({
      binaryPath: '/opt/whisper-cli',
      modelPath: '/models/base.bin',
      threads: 3,
      modelName: 'whisper-base',
      run,
      decoding: { translate: { audioContextMargin: 0 } },
    });
    await translating.transcribe({
      wavPath: '/tmp/a.wav',
      task: 'translate',
      prompt: '-- Hark, "quoted" $(not a shell)',
      temperature: 0.2,
    });
    expect(calls[0]?.args.slice(6, 13)).toEqual([
      '-l',
      'auto',
      '--translate',
      '--prompt-file',
      expect.stringMatching(/prompt\.txt$/),
      '--temperature',
      '0.2',
    ]);
    // The prompt went to the engine byte for byte, in a file only this user can read.
    expect(prompts[0]).toEqual({ text: '-- Hark, "quoted" $(not a shell)', mode: 0o600 });
    // The translate set it was given: whole windows, no fitted audio context.
    expect(calls[0]!.args.slice(13, calls[0]!.args.indexOf('-ojf'))).toEqual([
      '-bs',
      '1',
      '-bo',
      '5',
      '-sns',
    ]);
  });

  it('never puts the prompt on the command line, where every local user can read it', async () => {
    const { run, calls } = fakeRun(jfk);
    await engine(run).transcribe({ wavPath: '/tmp/a.wav', prompt: 'Patient: Jane Roe, MRN 0042' });
    expect(calls[0]!.args.join(' ')).not.toContain('Jane Roe');
    expect(calls[0]!.args).not.toContain('--prompt');
  });

  it('falls back to --prompt, once and for good, with a whisper-cli that has no --prompt-file', async () => {
    const calls: Call[] = [];
    // A stock whisper-cli: an unknown argument prints usage and exits 0 without output.
    const run: RunProcess = async (command, args, options) => {
      calls.push({ command, args, options });
      if (args.includes('--prompt-file'))
        return { stdout: '', stderr: 'error: unknown argument: --prompt-file\nusage: ...', durationMs: 1 };
      writeFileSync(`${args[args.indexOf('-of') + 1] as string}.json`, jfk);
      return { stdout: '', stderr: '', durationMs: 1 };
    };
    const e = engine(run);
    const first = await e.transcribe({ wavPath: '/tmp/a.wav', prompt: 'Hark' });
    expect(first.words).toHaveLength(22);
    await e.transcribe({ wavPath: '/tmp/a.wav', prompt: 'Hark' });
    expect(calls.map((c) => c.args.includes('--prompt-file'))).toEqual([true, false, false]);
    expect(calls[1]!.args[calls[1]!.args.indexOf('--prompt') + 1]).toBe('Hark');
  });

  it('applies the decoding set of the task it runs, as given, arguments and environment alike', async () => {
    const { run, calls } = fakeRun(jfk);
    const e = new WhisperEngine({
      binaryPath: 'x',
      modelPath: 'y',
      threads: 1,
      modelName: 'z',
      run,
      decoding: {
        transcribe: { beamSize: 2, audioContextMargin: 100, decodeThreads: 1 },
        translate: { beamSize: 3, suppressNonSpeech: false, audioContextMargin: 0, decodeThreads: 0 },
      },
    });
    await e.transcribe({ wavPath: '/tmp/a.wav', task: 'translate' });
    await e.transcribe({ wavPath: '/tmp/a.wav' });
    await e.transcribe({ wavPath: '/tmp/a.wav', task: 'transcribe' });
    expect(calls[0]!.args).toContain('--translate');
    expect(calls.map((c) => c.args.slice(c.args.indexOf('-bs'), c.args.indexOf('-ojf')))).toEqual([
      ['-bs', '3', '-bo', '5'],
      ['-bs', '2', '-bo', '5', '-sns', '-ac', '-100'],
      ['-bs', '2', '-bo', '5', '-sns', '-ac', '-100'],
    ]);
    expect(calls.map((c) => c.options?.env)).toEqual([
      {},
      { WHISPER_DECODE_THREADS: '1' },
      { WHISPER_DECODE_THREADS: '1' },
    ]);
    expect(e.decoding.translate).toEqual({
      ...DEFAULT_DECODING,
      beamSize: 3,
      suppressNonSpeech: false,
      audioContextMargin: 0,
      decodeThreads: 0,
    });
  });

  it('adds no engine options for a plain transcription', async () => {
    const { run, calls } = fakeRun(jfk);
    await engine(run).transcribe({
      wavPath: '/tmp/a.wav',
      task: 'transcribe',
      prompt: null,
      temperature: null,
    });
    const args = calls[0]!.args;
    expect(args.slice(6, args.indexOf('-ojf'))).toEqual(['-l', 'auto', ...decodingArgs(DEFAULT_DECODING)]);
  });

  it('asks for DTW word timestamps only when the model has a preset', async () => {
    const withPreset = fakeRun(jfk);
    const e = new WhisperEngine({
      binaryPath: '/opt/whisper-cli',
      modelPath: '/models/base.bin',
      threads: 2,
      modelName: 'whisper-base',
      dtwPreset: 'base',
      run: withPreset.run,
    });
    await e.transcribe({ wavPath: '/tmp/a.wav', wordTimestamps: 'dtw' });
    await e.transcribe({ wavPath: '/tmp/a.wav', wordTimestamps: 'tokens' });
    await e.transcribe({ wavPath: '/tmp/a.wav' });
    const [dtw, tokens, plain] = withPreset.calls.map((c) => c.args);
    expect(dtw!.slice(dtw!.indexOf('-dtw'), dtw!.indexOf('-dtw') + 2)).toEqual(['-dtw', 'base']);
    expect(dtw).not.toContain('-nfa');
    expect(dtw!.indexOf('-dtw')).toBeLessThan(dtw!.indexOf('-ojf'));
    for (const args of [tokens!, plain!]) expect(args.some((a) => a === '-dtw' || a === '-nfa')).toBe(false);

    const noPreset = fakeRun(jfk);
    const bare = engine(noPreset.run);
    await bare.transcribe({ wavPath: '/tmp/a.wav', wordTimestamps: 'dtw' });
    expect(noPreset.calls[0]!.args.some((a) => a === '-dtw' || a === '-nfa')).toBe(false);
  });

  it('decodes only the speech VAD finds when asked (whisper.cpp --vad and its settings), else everything', async () => {
    const withVad = fakeRun(jfk);
    const vad = { modelPath: '/models/ggml-silero-v5.1.2.bin', ...DEFAULT_VAD };
    const e = new WhisperEngine({
      binaryPath: '/opt/whisper-cli',
      modelPath: '/models/base.bin',
      threads: 2,
      modelName: 'whisper-base',
      vad,
      run: withVad.run,
    });
    await e.transcribe({ wavPath: '/tmp/a.wav', task: 'translate' });
    const args = withVad.calls[0]!.args;
    const at = args.indexOf('--vad');
    expect(args.slice(at, at + 11)).toEqual([
      '--vad',
      '-vm',
      '/models/ggml-silero-v5.1.2.bin',
      '-vt',
      '0.5',
      '-vspd',
      '250',
      '-vsd',
      '2000',
      '-vp',
      '400',
    ]);
    expect(at).toBeLessThan(args.indexOf('-ojf'));
    expect(vadArgs(null)).toEqual([]);
    const plain = fakeRun(jfk);
    await engine(plain.run).transcribe({ wavPath: '/tmp/a.wav' });
    expect(plain.calls[0]!.args.some((a) => a.startsWith('--vad') || a === '-vm')).toBe(false);
  });

  it('gives whisper-cli audio of a single sample padded with silence to 50 ms, and removes the copy', async () => {
    // One sample: whisper-cli's spectrogram has no frame, it fails to detect a language and
    // exits 10, which reads as a crash. 50 ms it transcribes to nothing.
    const dir = mkdtempSync(join(tmpdir(), 'hark-whisper-spec-'));
    try {
      const oneSample = join(dir, 'one.wav');
      const header = Buffer.from(
        '524946462600000057415645666d74201000000001000100803e0000007d00000200100064617461',
        'hex',
      );
      const size = Buffer.alloc(4);
      size.writeUInt32LE(2);
      writeFileSync(oneSample, Buffer.concat([header, size, Buffer.from([0xe8, 0x03])]));
      let heard = 0;
      const { run: fake, calls } = fakeRun(jfk);
      const run: RunProcess = async (command, args, options) => {
        heard = await readWavDuration(args[args.indexOf('-f') + 1] as string);
        return fake(command, args, options);
      };
      await engine(run).transcribe({ wavPath: oneSample });
      const given = calls[0]?.args[calls[0].args.indexOf('-f') + 1] as string;
      expect(given).not.toBe(oneSample);
      expect(heard).toBe(0.05);
      expect(existsSync(given)).toBe(false);
      await expect(readWavDuration(oneSample)).resolves.toBe(1 / 16000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exposes the model name', () => {
    expect(engine(fakeRun(jfk).run).modelName).toBe('whisper-base');
  });

  it('rejects a non-positive thread count', () => {
    expect(() => new WhisperEngine({ binaryPath: 'x', modelPath: 'y', threads: 0, modelName: 'z' })).toThrow(
      RangeError,
    );
  });

  it.each([
    [
      'a crash (signal)',
      new ProcessError('killed', { command: 'w', exitCode: null, signal: 'SIGSEGV', stderr: 'boom' }),
      true,
    ],
    [
      'inference failure (exit 10)',
      new ProcessError('exit 10', {
        command: 'w',
        exitCode: 10,
        signal: null,
        stderr: 'failed to process audio',
      }),
      true,
    ],
    [
      'an unloadable model (exit 3)',
      new ProcessError('exit 3', {
        command: 'w',
        exitCode: 3,
        signal: null,
        stderr: 'failed to initialize whisper context',
      }),
      false,
    ],
    [
      'a missing binary',
      new ProcessError('no', {
        command: 'w',
        exitCode: null,
        signal: null,
        stderr: '',
        spawnErrorCode: 'ENOENT',
      }),
      false,
    ],
  ])('maps %s to engine_failed (transient: %s)', async (_name, error, transient) => {
    const failure = engine(fakeRun(null, { error }).run).transcribe({ wavPath: '/tmp/a.wav' });
    await expect(failure).rejects.toMatchObject({
      name: 'MediaError',
      code: 'engine_failed',
      transient,
      stderr: error.stderr,
    });
  });

  it('lets an abort through unchanged', async () => {
    const abort = new MediaAbortError();
    await expect(engine(fakeRun(null, { error: abort }).run).transcribe({ wavPath: 'a' })).rejects.toBe(
      abort,
    );
  });

  it('fails when whisper-cli exits 0 without writing output', async () => {
    const stderr = "error: failed to read audio file '/tmp/a.wav'\n";
    const failure = engine(fakeRun(null, { stderr }).run).transcribe({ wavPath: '/tmp/a.wav' });
    await expect(failure).rejects.toBeInstanceOf(MediaError);
    await expect(failure).rejects.toMatchObject({ code: 'engine_failed', transient: false, stderr });
  });

  it('fails permanently on output it cannot parse', async () => {
    const failure = engine(fakeRun('{"result": {}}').run).transcribe({ wavPath: '/tmp/a.wav' });
    await expect(failure).rejects.toMatchObject({ code: 'engine_failed', transient: false });
  });
});
