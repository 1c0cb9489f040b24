import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MediaError, isAbortError } from './media-error';
import { ProcessError, stderrSummary, runProcess, type RunProcess } from './process-runner';
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
}

export interface TranscribeInput {
  /** 16 kHz mono s16le WAV, as `decodeToWav` writes it. */
  wavPath: string;
  /** Language code to force; null or absent detects it. */
  language?: string | null;
  /** `translate`: English text from speech in any language (`--translate`). Default `transcribe`. */
  task?: 'transcribe' | 'translate';
  /** Initial prompt: spelling, vocabulary, style of the previous window (`--prompt`). Default none. */
  prompt?: string | null;
  /** Sampling temperature 0 to 1 (`--temperature`); the engine still falls back upwards. Default the engine's (0). */
  temperature?: number | null;
  signal?: AbortSignal;
}

/** whisper.cpp through its CLI: one process per transcription, so cancel is a plain SIGKILL. */
export class WhisperEngine {
  readonly modelName: string;
  private readonly run: RunProcess;

  constructor(private readonly options: WhisperEngineOptions) {
    if (!Number.isInteger(options.threads) || options.threads < 1) {
      throw new RangeError(`threads must be a positive integer, got ${options.threads}`);
    }
    this.modelName = options.modelName;
    this.run = options.run ?? runProcess;
  }

  async transcribe({
    wavPath,
    language,
    task,
    prompt,
    temperature,
    signal,
  }: TranscribeInput): Promise<WhisperResult> {
    const { binaryPath, modelPath, threads, tmpDir, timeoutMs, debug } = this.options;
    const dir = await mkdtemp(join(tmpDir ?? tmpdir(), 'hark-whisper-'));
    const outPrefix = join(dir, 'out');
    const args = [
      ['-m', modelPath, '-f', wavPath, '-t', String(threads)],
      ['-l', language || 'auto'],
      task === 'translate' ? ['--translate'] : [],
      // One argv entry each (no shell): a prompt is passed through byte for byte.
      prompt ? ['--prompt', prompt] : [],
      temperature === null || temperature === undefined ? [] : ['--temperature', String(temperature)],
      // Full JSON turns token timestamps on; the words are built from them.
      ['-ojf', '-of', outPrefix],
    ].flat();
    try {
      let stderr: string;
      try {
        // stdout only repeats the segments; discarding it keeps a 10-hour run's memory flat.
        ({ stderr } = await this.run(binaryPath, args, { signal, debug, timeoutMs, captureStdout: false }));
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
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
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
