import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediaError, isAbortError } from './media-error';
import { ProcessError, stderrSummary, runProcess, type RunProcess } from './process-runner';
import { padShortWav } from './short-audio';
import { parseWhisperJson, type WhisperResult } from './whisper-output';

export interface WhisperEngineOptions {
  /** whisper-cli built by scripts/build-whisper.sh. */
  binaryPath: string;
  /** A ggml model file. */
  modelPath: string;
  /** CPU threads for one transcription (`-t`). */
  threads: number;
  /** The name reported as the transcript's `model`, e.g. `whisper-base`. */
  modelName: string;
  /** Where the per-run output folder is made. Default: the OS temp folder. */
  tmpDir?: string;
  /** Kill the engine after this long; the failure is transient. Default: no limit. */
  timeoutMs?: number;
  /** Receives each command line. Default: none. */
  debug?: (commandLine: string) => void;
  /** Process runner; tests pass a fake. Default: `runProcess`. */
  run?: RunProcess;
  /**
   * How the engine decodes each task; what a task's set leaves out comes from `DEFAULT_DECODING`
   * (see bench/engine/README.md for why). The engine applies the running task's set as given.
   */
  decoding?: { [T in WhisperTask]?: Partial<DecodingOptions> };
  /**
   * The model's `-dtw` preset (`dtwPreset(modelPath)`), which DTW word timestamps need; null or
   * absent: a transcription that asks for them gets token timestamps instead.
   */
  dtwPreset?: string | null;
  /**
   * Voice activity detection before decoding (whisper.cpp `--vad`, Silero v5 in ggml): only the
   * speech it finds is decoded, joined, and every time is mapped back to the original audio
   * (segments upstream, tokens and DTW times by scripts/whisper-patches/0005). Null or absent:
   * the whole audio is decoded.
   */
  vad?: VadOptions | null;
}

/** The file scripts/vad-model.sh makes (under `.hark/models` by default). */
export const VAD_MODEL_FILE = 'ggml-silero-v5.1.2.bin';

/** whisper.cpp's VAD settings (`-vm`, `-vt`, `-vspd`, `-vsd`, `-vp`). */
export interface VadOptions {
  /** The ggml Silero model (`VAD_MODEL_FILE`, made by scripts/vad-model.sh). */
  modelPath: string;
  /** Speech probability from which a frame is speech. */
  threshold: number;
  /** Speech shorter than this (ms) is dropped. */
  minSpeechMs: number;
  /** Silence shorter than this (ms) does not end a speech segment. */
  minSilenceMs: number;
  /** Audio kept on both sides of each speech segment (ms). */
  speechPadMs: number;
}

/**
 * faster-whisper's `vad_filter` settings (its VadOptions defaults, with min_speech_duration_ms
 * at whisper.cpp's 250): whisper.cpp's own (100 ms silence ends a segment, 30 ms of padding)
 * cut between words, and every cut is a join the decoder hears as a pause.
 */
export const DEFAULT_VAD: Readonly<Omit<VadOptions, 'modelPath'>> = {
  threshold: 0.5,
  minSpeechMs: 250,
  minSilenceMs: 2000,
  speechPadMs: 400,
};

/** whisper-cli arguments for the VAD settings (none when there are none). */
export function vadArgs(vad: VadOptions | null | undefined): string[] {
  if (!vad) return [];
  return [
    '--vad',
    '-vm',
    vad.modelPath,
    '-vt',
    String(vad.threshold),
    '-vspd',
    String(vad.minSpeechMs),
    '-vsd',
    String(vad.minSilenceMs),
    '-vp',
    String(vad.speechPadMs),
  ];
}

/**
 * How words are timed. `tokens`: the decoder's timestamp tokens, spread over each 30 s window
 * (they put words into silences a window holds). `dtw`: OpenAI's word timestamps, the alignment
 * heads' cross-attention aligned by dynamic time warping (`-dtw`), close to the speech. Upstream
 * whisper.cpp computes them only without flash attention; scripts/whisper-patches/0004 computes
 * the heads' weights beside flash attention in the one decoder pass per window that saves them.
 */
export const WORD_TIMESTAMPS = ['tokens', 'dtw'] as const;
export type WordTimestamps = (typeof WORD_TIMESTAMPS)[number];

/** What whisper-cli is asked for: text in the spoken language, or English (`--translate`). */
export type WhisperTask = 'transcribe' | 'translate';

/** Decoding options for each task. */
export type TaskDecoding = Record<WhisperTask, DecodingOptions>;

export interface DecodingOptions {
  /** Beam size (`-bs`); 1 is greedy decoding. */
  beamSize: number;
  /** Candidates sampled at each temperature of the fallback (`-bo`). */
  bestOf: number;
  /** Suppress non-speech tokens (`-sns`: `>>` at speaker turns, music symbols, brackets), as OpenAI's and faster-whisper's defaults do. */
  suppressNonSpeech: boolean;
  /**
   * Encode only the audio each 30 s window holds plus this many positions (50 a second) instead
   * of the whole window: the last window of a file and any file shorter than 30 s skip encoding
   * padding (`-ac -N`, scripts/whisper-patches/0002). 0 encodes whole windows.
   */
  audioContextMargin: number;
  /**
   * Threads for the decoder's per-token passes, at most `threads` (the encoder keeps `threads`);
   * 0 uses `threads`. Passed as WHISPER_DECODE_THREADS (scripts/whisper-patches/0003).
   */
  decodeThreads: number;
}

/** The worker's decoding: chosen and measured in bench/engine (README.md there). */
export const DEFAULT_DECODING: Readonly<DecodingOptions> = {
  beamSize: 1,
  bestOf: 5,
  suppressNonSpeech: true,
  audioContextMargin: 640,
  decodeThreads: 1,
};

/** Environment for whisper-cli from the decoding options (read by the patched engine). */
export function decodingEnv(decoding: DecodingOptions): Record<string, string> {
  return decoding.decodeThreads > 0 ? { WHISPER_DECODE_THREADS: String(decoding.decodeThreads) } : {};
}

/** whisper-cli arguments for the decoding options. */
export function decodingArgs(decoding: DecodingOptions): string[] {
  const args = ['-bs', String(decoding.beamSize), '-bo', String(decoding.bestOf)];
  if (decoding.suppressNonSpeech) args.push('-sns');
  // Negative: the patched engine fits each window's context to its audio plus the margin.
  if (decoding.audioContextMargin > 0) args.push('-ac', String(-decoding.audioContextMargin));
  return args;
}

export interface TranscribeInput {
  /** 16 kHz mono s16le WAV, as `decodeToWav` writes it. */
  wavPath: string;
  /** Language code to force; null or absent detects it. */
  language?: string | null;
  /** `translate`: English text from speech in any language (`--translate`). Default `transcribe`. */
  task?: WhisperTask;
  /** Initial prompt: spelling, vocabulary, style of the previous window (`--prompt-file`). Default none. */
  prompt?: string | null;
  /** Sampling temperature 0 to 1 (`--temperature`); the engine still falls back upwards. Default the engine's (0). */
  temperature?: number | null;
  /** How words are timed; `dtw` needs the engine's `dtwPreset`. Default `tokens`. */
  wordTimestamps?: WordTimestamps;
  /**
   * Where this run's folder (its output, the prompt's file) is made: the worker passes the job's
   * own folder, so what a killed run leaves goes with the rest of the job's files. Default: the
   * engine's `tmpDir`.
   */
  tmpDir?: string;
  signal?: AbortSignal;
}

/** whisper.cpp through its CLI: one process per transcription, so cancel is a plain SIGKILL. */
export class WhisperEngine {
  readonly modelName: string;
  readonly decoding: Readonly<TaskDecoding>;
  private readonly run: RunProcess;
  /**
   * Whether whisper-cli reads the prompt from a file (`--prompt-file`, scripts/whisper-patches/0006).
   * Until a binary shows it cannot (a stock whisper-cli: "unknown argument"), the prompt is never
   * put on the command line, which every local user can read in /proc and `debug` logs.
   */
  private promptInFile = true;

  constructor(private readonly options: WhisperEngineOptions) {
    if (!Number.isInteger(options.threads) || options.threads < 1) {
      throw new RangeError(`threads must be a positive integer, got ${options.threads}`);
    }
    this.modelName = options.modelName;
    this.run = options.run ?? runProcess;
    this.decoding = {
      transcribe: checkedDecoding({ ...DEFAULT_DECODING, ...options.decoding?.transcribe }),
      translate: checkedDecoding({ ...DEFAULT_DECODING, ...options.decoding?.translate }),
    };
  }

  async transcribe(input: TranscribeInput): Promise<WhisperResult> {
    const dir = await mkdtemp(join(input.tmpDir ?? this.options.tmpDir ?? tmpdir(), 'hark-whisper-'));
    try {
      // Audio of a few samples would make whisper-cli fail instead of transcribing nothing.
      const wavPath = await padShortWav(input.wavPath, dir);
      const out = join(dir, 'out');
      if (!input.prompt || !this.promptInFile) return await this.runEngine({ ...input, wavPath }, out, null);
      // The run's own folder (mkdtemp: 0700) and a file only this user reads.
      const promptPath = join(dir, 'prompt.txt');
      await writeFile(promptPath, input.prompt, { mode: 0o600 });
      try {
        return await this.runEngine({ ...input, wavPath }, out, promptPath);
      } catch (error) {
        if (!(error instanceof MediaError) || !/unknown argument: --prompt-file/.test(error.stderr ?? ''))
          throw error;
        this.promptInFile = false;
        return await this.runEngine({ ...input, wavPath }, out, null);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  private async runEngine(
    {
      wavPath,
      language,
      task = 'transcribe',
      prompt,
      temperature,
      wordTimestamps = 'tokens',
      signal,
    }: TranscribeInput,
    outPrefix: string,
    promptPath: string | null,
  ): Promise<WhisperResult> {
    const { binaryPath, modelPath, threads, timeoutMs, debug } = this.options;
    const decoding = this.decoding[task];
    const args = [
      ['-m', modelPath, '-f', wavPath, '-t', String(threads)],
      ['-l', language || 'auto'],
      task === 'translate' ? ['--translate'] : [],
      // The prompt's file, or (a whisper-cli without --prompt-file) the prompt as one argv entry,
      // no shell: either way passed through byte for byte.
      promptPath ? ['--prompt-file', promptPath] : prompt ? ['--prompt', prompt] : [],
      temperature === null || temperature === undefined ? [] : ['--temperature', String(temperature)],
      decodingArgs(decoding),
      this.dtwArgs(wordTimestamps),
      vadArgs(this.options.vad),
      // Full JSON turns token timestamps on; the words are built from them (or their DTW times).
      ['-ojf', '-of', outPrefix],
    ].flat();
    let stderr: string;
    try {
      // stdout only repeats the segments; discarding it keeps a 10-hour run's memory flat.
      ({ stderr } = await this.run(binaryPath, args, {
        signal,
        debug,
        timeoutMs,
        captureStdout: false,
        env: decodingEnv(decoding),
      }));
    } catch (error) {
      throw toMediaError(error);
    }
    const raw = await readFile(`${outPrefix}.json`, 'utf8').catch(() => null);
    // whisper-cli exits 0 without writing anything when it cannot read the audio or rejects
    // an argument, so a missing file is the real failure signal.
    if (raw === null) {
      const permanent = /unknown language|failed to (open|read|load)/i.test(stderr);
      throw new MediaError(
        'engine_failed',
        `whisper-cli wrote no output: ${stderrSummary(stderr) || 'no message'}`,
        {
          transient: !permanent,
          stderr,
        },
      );
    }
    try {
      return parseWhisperJson(raw);
    } catch (error) {
      throw new MediaError('engine_failed', (error as Error).message, {
        transient: false,
        stderr,
        cause: error,
      });
    }
  }

  private dtwArgs(wordTimestamps: WordTimestamps): string[] {
    const preset = this.options.dtwPreset;
    return wordTimestamps === 'dtw' && preset ? ['-dtw', preset] : [];
  }
}

/** The options, or a RangeError for one whisper-cli would refuse or misread. */
function checkedDecoding(decoding: DecodingOptions): DecodingOptions {
  const { beamSize, bestOf, audioContextMargin, decodeThreads } = decoding;
  if (!Number.isInteger(beamSize) || beamSize < 1 || beamSize > 16) {
    throw new RangeError(`beamSize must be an integer from 1 to 16, got ${beamSize}`);
  }
  if (!Number.isInteger(bestOf) || bestOf < 1 || bestOf > 16) {
    throw new RangeError(`bestOf must be an integer from 1 to 16, got ${bestOf}`);
  }
  if (!Number.isInteger(audioContextMargin) || audioContextMargin < 0 || audioContextMargin > 1500) {
    throw new RangeError(`audioContextMargin must be an integer from 0 to 1500, got ${audioContextMargin}`);
  }
  if (!Number.isInteger(decodeThreads) || decodeThreads < 0) {
    throw new RangeError(`decodeThreads must be a non-negative integer, got ${decodeThreads}`);
  }
  return decoding;
}

function toMediaError(error: unknown): unknown {
  if (isAbortError(error) || !(error instanceof ProcessError)) return error;
  // whisper-cli exits 1-4 for bad arguments, a model it cannot load or a bad grammar
  // (examples/cli/cli.cpp main), and a missing binary is configuration too: retrying cannot help.
  // A crash, an OOM kill, a timeout or exit 10 (inference failed) can pass on another attempt.
  const setupFailure = error.exitCode !== null && error.exitCode >= 1 && error.exitCode <= 4;
  const transient = error.spawnErrorCode === null && !setupFailure;
  return new MediaError('engine_failed', error.message, { transient, stderr: error.stderr, cause: error });
}
