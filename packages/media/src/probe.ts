import { access, constants } from 'node:fs/promises';
import { ffmpegFailure, fileUrl, withDefaults, type FfmpegCallOptions } from './ffmpeg-tools';
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
}

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
  const args = ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', '-i', fileUrl(path)];
  const { stdout } = await run(ffprobe, args, runOptions).catch((e: unknown) => {
    throw ffmpegFailure(e, 'ffprobe rejected the input');
  });
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
 * ffprobe JSON -> ProbeResult. `durationSeconds` is null when neither the stream nor the
 * container records one (WebM from a browser's MediaRecorder, anything written to a pipe).
 */
export function normaliseProbe(
  json: unknown,
): Omit<ProbeResult, 'durationSeconds'> & { durationSeconds: number | null } {
  const doc = isObject(json) ? json : {};
  const format = isObject(doc['format']) ? doc['format'] : {};
  const streams = Array.isArray(doc['streams']) ? doc['streams'].filter(isObject) : [];
  const audio = streams.find((s) => s['codec_type'] === 'audio');
  if (!audio) throw new MediaError('audio_invalid', 'The file has no audio stream', { transient: false });
  const tags = isObject(audio['tags']) ? audio['tags'] : {};
  // The audio stream's own length first: in a video file the container's may be the video's.
  const durationSeconds =
    seconds(audio['duration']) ?? seconds(format['duration']) ?? clockSeconds(tags['DURATION']) ?? null;
  return {
    durationSeconds,
    formatName: typeof format['format_name'] === 'string' ? format['format_name'] : 'unknown',
    hasAudio: true,
    audioCodec: typeof audio['codec_name'] === 'string' ? audio['codec_name'] : null,
  };
}

/** Reads every packet of the first audio stream without decoding (stream copy), so it is quick. */
async function measureDuration(path: string, options: FfmpegCallOptions): Promise<number> {
  const { run, ffmpeg, runOptions } = withDefaults(options);
  const args = [
    ['-nostdin', '-v', 'error', '-i', fileUrl(path)],
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

function seconds(value: unknown): number | null {
  const n = typeof value === 'string' || typeof value === 'number' ? Number(value) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : null;
}

/** Matroska's `DURATION` tag: `HH:MM:SS.nnnnnnnnn`. */
function clockSeconds(value: unknown): number | null {
  const m = typeof value === 'string' ? /^(\d+):(\d{2}):(\d{2}(?:\.\d+)?)$/.exec(value) : null;
  return m ? Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) : null;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
