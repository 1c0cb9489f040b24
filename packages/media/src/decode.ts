import { access, constants, open, rm, stat } from 'node:fs/promises';
import { LIMITS } from '@hark/core';
import { ffmpegFailure, fileUrl, inputArgs, withDefaults, type FfmpegCallOptions } from './ffmpeg-tools';
import { MediaError } from './media-error';
import { wavLayout } from './wav';

export interface DecodeOptions extends FfmpegCallOptions {
  /**
   * The longest audio accepted, in seconds. Decoding stops `DECODE_MARGIN_SECONDS` past it
   * whatever the input claims, and the output stops growing at `wavSizeLimit(maxSeconds)` bytes
   * (1.15 GB for 10 h). Default: `LIMITS.maxAudioSeconds` (10 h).
   */
  maxSeconds?: number;
  /**
   * The probe's channel count when the stream has no channel layout (`ProbeResult.channels` when
   * `channelLayout` is null). ffmpeg guesses a layout for up to two channels; beyond that it
   * cannot mix them to mono ("Rematrix is needed between 12 channels and mono"), so they are
   * averaged with equal weights instead. Default: none (ffmpeg's own downmix).
   */
  layoutlessChannels?: number | null;
  /**
   * The most bytes the WAV may take (the job's scratch space left): the output stops growing
   * there, and the result says `outOfRoom`. Default: none beyond `wavSizeLimit(maxSeconds)`.
   */
  maxOutputBytes?: number;
}

export interface DecodeResult {
  outputPath: string;
  /** Length of the decoded audio, from the WAV data size: exactly what the engine will hear. */
  durationSeconds: number;
  /**
   * Decoding stopped at the cap: the audio is longer than `maxSeconds` (by at least the margin)
   * and `durationSeconds` is only where it was cut.
   */
  truncated: boolean;
  /**
   * Decoding stopped at `maxOutputBytes`: the audio needs more space than it was given (then
   * `durationSeconds` is 0 and the WAV is left for the caller to remove with its folder).
   */
  outOfRoom: boolean;
}

/**
 * How far past `maxSeconds` decoding goes. More than the pipeline's padding tolerance (0.5 s),
 * so audio cut at the cap can never pass for audio that just fits.
 */
export const DECODE_MARGIN_SECONDS = 1;

/** 16 kHz mono s16le. */
const WAV_BYTES_PER_SECOND = 16_000 * 2;
/** Room for the header, so that `-t`, not `-fs`, ends an honest decode at the cap. */
const WAV_HEADER_ROOM = 4096;

/** The samples of `seconds` of audio in the WAV `decodeToWav` writes (its header adds a few dozen bytes). */
export function wavDataBytes(seconds: number): number {
  return Math.ceil(seconds * WAV_BYTES_PER_SECOND);
}

/**
 * `-fs` for a decode capped at `maxSeconds`. ffmpeg checks it between input packets, so the file
 * can end past it by what one packet decodes to: a few KB for real audio; a frame is cut to the
 * cap at most.
 */
export function wavSizeLimit(maxSeconds: number): number {
  return Math.ceil((maxSeconds + DECODE_MARGIN_SECONDS) * WAV_BYTES_PER_SECOND) + WAV_HEADER_ROOM;
}

/**
 * Decodes the first audio stream of `input` (video files included) to the format whisper.cpp
 * reads: 16 kHz, mono, s16le WAV. Overwrites `outputPath`; removes it again on failure or abort.
 *
 * The decode is capped, not checked afterwards: a container's declared length is the uploader's
 * word (an ffconcat repeating one file 3,700 times probed as 3.7 s and decoded to gigabytes), so
 * `-t` stops at `maxSeconds` + the margin by the output's clock and `-fs` at the matching size,
 * in case the input's timestamps do not advance with its samples. The result says `truncated`.
 *
 * ffmpeg goes through the runner rather than fluent-ffmpeg: fluent-ffmpeg spawns helper
 * processes of its own (`which`, `ffmpeg -formats`) that cannot be aborted or logged, and its
 * `kill()` does nothing until its asynchronous set-up has spawned ffmpeg, so an early cancel
 * would be lost.
 *
 * Rejects with `MediaError` `audio_invalid` when ffmpeg cannot decode it or it holds no
 * samples; `engine_failed` (transient) on disk trouble or a crash; `MediaAbortError` on abort.
 */
export async function decodeToWav(
  input: string,
  outputPath: string,
  options: DecodeOptions = {},
): Promise<DecodeResult> {
  await access(input, constants.R_OK);
  const { run, ffmpeg, runOptions } = withDefaults(options);
  const maxSeconds = options.maxSeconds ?? LIMITS.maxAudioSeconds;
  const capSeconds = maxSeconds + DECODE_MARGIN_SECONDS;
  const roomBound = options.maxOutputBytes !== undefined && options.maxOutputBytes < wavSizeLimit(maxSeconds);
  const maxBytes = roomBound ? options.maxOutputBytes! : wavSizeLimit(maxSeconds);
  const args = [
    ['-nostdin', '-hide_banner', '-v', 'error', '-y'],
    inputArgs(input),
    ['-map', '0:a:0', '-vn', '-sn', '-dn'],
    meanDownmix(options.layoutlessChannels),
    ['-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le'],
    ['-t', String(capSeconds), '-fs', String(maxBytes)],
    // No LIST/INFO chunk: keeps the header plain for any WAV reader.
    ['-map_metadata', '-1', '-fflags', '+bitexact', '-flags:a', '+bitexact'],
    ['-f', 'wav', fileUrl(outputPath)],
  ].flat();
  try {
    await run(ffmpeg, args, runOptions).catch((e: unknown) => {
      throw ffmpegFailure(e, 'ffmpeg could not decode the audio');
    });
    // -fs stops once the file reaches the limit (a packet past it at most): only a cut one gets there.
    if (roomBound && (await stat(outputPath)).size >= maxBytes)
      return { outputPath, durationSeconds: 0, truncated: false, outOfRoom: true };
    const durationSeconds = await readWavDuration(outputPath);
    if (durationSeconds <= 0)
      throw new MediaError('audio_invalid', 'The audio stream holds no samples', { transient: false });
    // -t cuts at the cap exactly; a sample's worth of rounding either way is still the cap.
    const truncated = durationSeconds >= capSeconds - 0.01;
    return { outputPath, durationSeconds, truncated, outOfRoom: false };
  } catch (error) {
    await rm(outputPath, { force: true });
    throw error;
  }
}

/** `-af pan=...` averaging `channels` channels of unknown layout into one; none for up to two. */
export function meanDownmix(channels: number | null | undefined): string[] {
  if (!channels || !Number.isInteger(channels) || channels <= 2) return [];
  // `<` scales the gains to sum to 1: the mean of every channel.
  const sum = Array.from({ length: channels }, (_, i) => `c${i}`).join('+');
  return ['-af', `pan=mono|c0<${sum}`];
}

/** Duration of a PCM WAV file from its `fmt ` byte rate and `data` chunk size. */
export async function readWavDuration(path: string): Promise<number> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const header = Buffer.alloc(Math.min(size, 64 * 1024));
    await file.read(header, 0, header.length, 0);
    if (header.toString('ascii', 0, 4) !== 'RIFF' || header.toString('ascii', 8, 12) !== 'WAVE') {
      throw new Error(`${path} is not a RIFF/WAVE file`);
    }
    const wav = wavLayout(header, size);
    if (wav && wav.byteRate > 0) return wav.dataBytes / wav.byteRate;
    throw new Error(`${path} has no readable fmt/data chunks`);
  } finally {
    await file.close();
  }
}
