import { access, constants } from 'node:fs/promises';
import {
  PROBE_DECODER_LIMITS,
  PROBE_TIMEOUT_MS,
  ffmpegFailure,
  inputArgs,
  withDefaults,
  type FfmpegCallOptions,
} from './ffmpeg-tools';
import { MediaError } from './media-error';

export interface ProbeResult {
  /** Audio duration in seconds (float). */
  durationSeconds: number;
  /** ffprobe's `format_name`, e.g. `wav`, `mp3`, `mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`. */
  formatName: string;
  /** Always true on success: a file without an audio stream is rejected as `audio_invalid`. */
  hasAudio: boolean;
  /** Codec of the first audio stream (`pcm_s16le`, `aac`, `opus`, ...). */
  audioCodec: string | null;
  /** Channels of the first audio stream; null when ffprobe could not tell. */
  channels: number | null;
  /**
   * Its channel layout (`mono`, `5.1`, ...); null when it has none, as a WAV of more than two
   * channels without a channel mask, which ffmpeg cannot downmix by itself (see `decodeToWav`).
   */
  channelLayout: string | null;
}

/**
 * Only what `normaliseProbe` reads, of the first audio stream only. `-show_format -show_streams`
 * prints every tag and every stream: 36 MB of ID3 text in a valid MP3, or 25,000 streams, ran
 * past the runner's stdout limit. Of the tags only Matroska's per-stream `DURATION` is wanted.
 */
export const PROBE_ENTRIES =
  'format=format_name,duration:stream=codec_type,codec_name,duration,sample_rate,channels,channel_layout:stream_tags=DURATION';

/**
 * Reads the container with ffprobe. The runner rather than fluent-ffmpeg's `ffprobe`, which
 * cannot be aborted. Video files count for their first audio stream.
 *
 * Rejects with `MediaError` `audio_invalid` for undecodable input or no audio stream; with the
 * fs error when the file cannot be read; with `MediaAbortError` when aborted.
 */
export async function probeAudio(path: string, options: FfmpegCallOptions = {}): Promise<ProbeResult> {
  await access(path, constants.R_OK);
  const { run, ffprobe, runOptions } = withDefaults(options);
  const args = [
    ['-v', 'error', '-print_format', 'json', '-show_entries', PROBE_ENTRIES, '-select_streams', 'a:0'],
    inputArgs(path, PROBE_DECODER_LIMITS),
  ].flat();
  const { stdout } = await run(ffprobe, args, { ...runOptions, timeoutMs: PROBE_TIMEOUT_MS }).catch(
    (e: unknown) => {
      throw ffmpegFailure(e, 'ffprobe rejected the input');
    },
  );
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch (error) {
    throw new MediaError('engine_failed', 'ffprobe printed something other than JSON', {
      transient: false,
      cause: error,
    });
  }
  const probed = normaliseProbe(json);
  const durationSeconds = probed.durationSeconds ?? (await measureDuration(path, options));
  return { ...probed, durationSeconds };
}

/**
 * Sample rates and channel counts real audio has (8 kHz telephony to 768 kHz studio masters; up
 * to ffmpeg's resampler limit of 64 channels). Outside them the header is hostile or broken, and
 * decoding it would fail (an absurd rate makes the resampler's allocation fail) or turn a few
 * bytes into hours (1 Hz: 32 KB of samples "last" 4.4 hours).
 */
export const SANE_SAMPLE_RATES = { min: 1000, max: 768_000 } as const;
export const MAX_CHANNELS = 64;

/**
 * ffprobe JSON -> ProbeResult. `durationSeconds` is null when neither the stream nor the
 * container records one (WebM from a browser's MediaRecorder, anything written to a pipe).
 * Rejects as `audio_invalid` a file without an audio stream, or whose audio stream declares a
 * sample rate or channel count outside what real audio has.
 */
export function normaliseProbe(
  json: unknown,
): Omit<ProbeResult, 'durationSeconds'> & { durationSeconds: number | null } {
  const doc = isObject(json) ? json : {};
  const format = isObject(doc['format']) ? doc['format'] : {};
  const streams = Array.isArray(doc['streams']) ? doc['streams'].filter(isObject) : [];
  const audio = streams.find((s) => s['codec_type'] === 'audio');
  if (!audio) throw new MediaError('audio_invalid', 'The file has no audio stream', { transient: false });
  checkSaneAudio(audio);
  const tags = isObject(audio['tags']) ? audio['tags'] : {};
  // The audio stream's own length first, in whichever form the container keeps it (Matroska:
  // its DURATION tag): the container's is that of its longest stream, which may be a video or a
  // subtitle whose last cue comes hours after the audio ends.
  const durationSeconds =
    nonNegative(audio['duration']) ??
    clockSeconds(Object.entries(tags).find(([key]) => key.toUpperCase() === 'DURATION')?.[1]) ??
    nonNegative(format['duration']) ??
    null;
  return {
    durationSeconds,
    formatName: typeof format['format_name'] === 'string' ? format['format_name'] : 'unknown',
    hasAudio: true,
    audioCodec: typeof audio['codec_name'] === 'string' ? audio['codec_name'] : null,
    channels: nonNegative(audio['channels']) || null,
    channelLayout:
      typeof audio['channel_layout'] === 'string' && audio['channel_layout'] !== 'unknown'
        ? audio['channel_layout']
        : null,
  };
}

/** ffprobe leaves out or zeroes what it could not read: only a value it did report is judged. */
function checkSaneAudio(audio: Record<string, unknown>): void {
  const rate = nonNegative(audio['sample_rate']);
  if (rate && (rate < SANE_SAMPLE_RATES.min || rate > SANE_SAMPLE_RATES.max))
    throw new MediaError('audio_invalid', 'The audio has an unsupported sample rate', { transient: false });
  const channels = nonNegative(audio['channels']);
  if (channels && channels > MAX_CHANNELS)
    throw new MediaError('audio_invalid', 'The audio has too many channels', { transient: false });
}

/** Reads every packet of the first audio stream without decoding (stream copy), so it is quick. */
async function measureDuration(path: string, options: FfmpegCallOptions): Promise<number> {
  const { run, ffmpeg, runOptions } = withDefaults(options);
  const args = [
    ['-nostdin', '-v', 'error', ...inputArgs(path)],
    ['-map', '0:a:0', '-c', 'copy', '-f', 'null', '-progress', 'pipe:1', '-nostats', '-'],
  ].flat();
  const { stdout } = await run(ffmpeg, args, runOptions).catch((e: unknown) => {
    throw ffmpegFailure(e, 'ffmpeg could not read the audio stream');
  });
  const times = [...stdout.matchAll(/^out_time_us=(\d+)$/gm)];
  const last = times[times.length - 1]?.[1];
  if (last === undefined)
    throw new MediaError('audio_invalid', 'Could not measure the audio duration', { transient: false });
  return Number(last) / 1_000_000;
}

/** A finite number >= 0 from ffprobe's JSON (numbers and numeric strings alike), else null. */
function nonNegative(value: unknown): number | null {
  const n = typeof value === 'string' || typeof value === 'number' ? Number(value) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : null;
}

/** Matroska's `DURATION` tag (ffprobe matches its name in any case, and so do we): `HH:MM:SS.nnnnnnnnn`. */
function clockSeconds(value: unknown): number | null {
  const m = typeof value === 'string' ? /^(\d+):(\d{2}):(\d{2}(?:\.\d+)?)$/.exec(value) : null;
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
