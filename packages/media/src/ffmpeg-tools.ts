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
  /** Each ffmpeg/ffprobe process's address-space limit; null: none. Default: `TOOL_ADDRESS_SPACE_BYTES`. */
  maxAddressSpaceBytes?: number | null;
}

/**
 * The most address space an ffmpeg or ffprobe process may take (RLIMIT_AS, through the runner).
 * Probing opens a decoder for every stream of a file and decodes a frame of each, even of
 * streams we never use: a 1.7 MB Matroska file holding 8 video tracks of one 8192x8192 PNG frame
 * each made ffprobe peak at 1.6 GB of RSS, and a hundred such tracks would take the host. Past
 * the limit a decoder's allocation fails and its stream is left unprobed (or the tool exits
 * "Cannot allocate memory": `audio_invalid`); that file now peaks at 445 MB. Real inputs stay
 * well below it (Debian's ffmpeg 5.1, measured): a 10-hour decode runs in 384 MiB of address
 * space, shared libraries included, and ffprobe on an 8K H.264 video in 512 MiB.
 */
export const TOOL_ADDRESS_SPACE_BYTES = 768 * 1024 ** 2;

/**
 * How long ffprobe may take. It reads headers and a few seconds of packets, well under a second
 * for real files; a hostile one that keeps it busy is killed (transient, so at most three tries).
 */
export const PROBE_TIMEOUT_MS = 60_000;

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
export function inputArgs(path: string, decoders: readonly string[] = DECODER_LIMITS): string[] {
  return [
    ...decoders,
    ...['-format_whitelist', INPUT_DEMUXERS.join(','), '-protocol_whitelist', 'file', '-i', fileUrl(path)],
  ];
}

/**
 * Decoder options for every input (before `-i`, so they reach the decoders that probing opens for
 * every stream). One thread each: frame threading gives each decoder a context and buffers per
 * thread, which multiplies what a stream can cost, and it adds nothing to decoding audio.
 */
export const PROBE_DECODER_LIMITS: readonly string[] = ['-threads', '1'];

/**
 * ffmpeg only decodes audio, so its video decoders (opened while probing) may refuse any picture
 * above 64x64: a huge frame is skipped instead of allocated. Not for ffprobe, which opens a
 * decoder for every stream it reports and exits when one refuses the stream's size (a 1080p
 * H.264 video): there the address-space limit is the bound.
 */
export const DECODER_LIMITS: readonly string[] = [...PROBE_DECODER_LIMITS, '-max_pixels', String(64 * 64)];

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
 * (transient); more stdout than the runner keeps is `audio_invalid`. Aborts pass through unchanged.
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
  // The tool was printing without end about the input (ffprobe, a tag or stream per entry):
  // the same input prints the same again, so another try cannot help.
  if (error.stdoutOverflow) {
    return new MediaError('audio_invalid', `${what}: ${error.message}`, {
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
    runOptions: {
      signal: options.signal,
      debug: options.debug,
      ...(options.maxAddressSpaceBytes === null
        ? {}
        : { maxAddressSpaceBytes: options.maxAddressSpaceBytes ?? TOOL_ADDRESS_SPACE_BYTES }),
    },
  };
}
