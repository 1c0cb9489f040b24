import { AUDIO_CONTAINERS } from '@hark/core';
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
 * Output paths go through the `file:` protocol so a path can never be read as a URL or another
 * protocol (`http://...`, `concat:...`).
 */
export const fileUrl = (path: string) => `file:${path}`;

/** The demuxers an input may be read with: those of the formats we accept (@hark/core). */
export const INPUT_DEMUXERS: readonly string[] = [...new Set(Object.values(AUDIO_CONTAINERS))];

/**
 * The input options of every ffmpeg/ffprobe call on audio we were given, ending with `-i`.
 *
 * By default ffmpeg picks whichever of its ~300 demuxers the bytes look like, and several of
 * them open other files or URLs named inside the input: concat/ffconcat (a list of files, with
 * `duration` and `inpoint` to repeat one cheaply), hls and dash (playlists of local or remote
 * segments), image2 (file-name patterns), and protocols such as `concat:`, `subfile:`, `data:`
 * and the network ones. An upload is bytes a caller chose, so it must not get to name anything:
 * `-format_whitelist` allows only the demuxers of the accepted containers (none of which opens a
 * second file; mov's external references are off by default), and `-protocol_whitelist file`
 * only local files, so not even a nested open could reach the network or another protocol. Both
 * are input options honoured by ffmpeg and ffprobe alike (checked with Debian's 5.1), and nested
 * opens inherit them. Anything else fails with "Format not on whitelist" and exit code 1:
 * `audio_invalid`.
 */
export function inputArgs(path: string): string[] {
  return ['-format_whitelist', INPUT_DEMUXERS.join(','), '-protocol_whitelist', 'file', '-i', fileUrl(path)];
}

/**
 * Worth another try. Not "Cannot allocate memory": ENOMEM from ffmpeg means one allocation was
 * refused, in practice a size taken from a hostile header (a 2^31 Hz sample rate makes the
 * resampler ask for gigabytes), so a retry fails the same way; real memory exhaustion on Linux is
 * the OOM killer's SIGKILL, an exit without a code, which stays transient.
 */
const DISK_TROUBLE = /No space left on device|Input\/output error/i;

/**
 * Maps an ffmpeg/ffprobe failure: the tool rejecting the input, or an allocation the input made
 * it attempt failing, is `audio_invalid` (permanent); a missing binary is `engine_failed`
 * (permanent, configuration); a signal kill, a timeout or disk trouble is `engine_failed`
 * (transient). Aborts pass through unchanged.
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
