import { MediaError, isAbortError } from './media-error';
import { ProcessError, runProcess, type RunProcess } from './process-runner';

/** Options shared by the ffmpeg/ffprobe calls. */
export interface FfmpegCallOptions {
  signal?: AbortSignal;
  /** Receives each command line. Default: none. */
  debug?: (commandLine: string) => void;
  /** Default: `ffmpeg` from PATH. */
  ffmpegPath?: string;
  /** Default: `ffprobe` from PATH. */
  ffprobePath?: string;
  /** Process runner; tests pass a fake. Default: `runProcess`. */
  run?: RunProcess;
}

/**
 * Inputs go through the `file:` protocol so a path can never be read as a URL or another
 * protocol (`http://...`, `concat:...`): ffmpeg must not fetch anything the caller did not.
 */
export const fileUrl = (path: string) => `file:${path}`;

const DISK_TROUBLE = /No space left on device|Cannot allocate memory|Input\/output error/i;

/**
 * Maps an ffmpeg/ffprobe failure: the tool rejecting the input is `audio_invalid` (permanent);
 * a missing binary is `engine_failed` (permanent, configuration); a signal kill, a timeout or
 * disk/memory trouble is `engine_failed` (transient). Aborts pass through unchanged.
 */
export function ffmpegFailure(error: unknown, what: string): unknown {
  if (isAbortError(error) || !(error instanceof ProcessError)) return error;
  const { stderr } = error;
  if (error.spawnErrorCode !== null) {
    return new MediaError('engine_failed', `${what}: ${error.message}`, {
      transient: false,
      stderr,
      cause: error,
    });
  }
  if (error.exitCode === null || DISK_TROUBLE.test(stderr)) {
    return new MediaError('engine_failed', `${what}: ${error.message}`, {
      transient: true,
      stderr,
      cause: error,
    });
  }
  return new MediaError('audio_invalid', `${what}: ${error.message}`, {
    transient: false,
    stderr,
    cause: error,
  });
}

export function withDefaults(options: FfmpegCallOptions) {
  return {
    run: options.run ?? runProcess,
    ffmpeg: options.ffmpegPath ?? 'ffmpeg',
    ffprobe: options.ffprobePath ?? 'ffprobe',
    runOptions: { signal: options.signal, debug: options.debug },
  };
}
