import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pcmWav, wavLayout } from './wav';

/**
 * The shortest audio whisper-cli is given, in 16 kHz samples (50 ms). Below 41 samples its
 * spectrogram has no frame, language detection fails and it exits 10 ("failed to auto-detect
 * language"), which looks like an engine crash and is retried. From 41 samples up to 100 ms it
 * detects a language and transcribes nothing ("input is too short"): so very short audio is
 * padded with silence to this length, well inside that range, and comes back empty.
 */
export const MIN_ENGINE_SAMPLES = 800;

/** 16 kHz mono s16le, as `decodeToWav` writes it. */
const BYTES_PER_SAMPLE = 2;
const SAMPLE_RATE = 16_000;

/**
 * `wavPath`, or when it holds fewer than `MIN_ENGINE_SAMPLES` samples a copy padded with
 * silence to that length, written into `dir`. Only for the engine: what is charged stays the
 * length of the decoded audio. A file that is not the 16 kHz mono PCM WAV `decodeToWav` writes
 * is returned unchanged, for whisper-cli to judge.
 */
export async function padShortWav(wavPath: string, dir: string): Promise<string> {
  // Anything over a few KB holds more than 50 ms: not worth reading. Unreadable: whisper-cli says so.
  const size = await stat(wavPath).then(
    (s) => s.size,
    () => null,
  );
  if (size === null || size > 16 * 1024) return wavPath;
  const bytes = await readFile(wavPath);
  const data = pcmData(bytes);
  if (data === null || data.length >= MIN_ENGINE_SAMPLES * BYTES_PER_SAMPLE) return wavPath;
  const padded = join(dir, 'padded.wav');
  await writeFile(
    padded,
    pcmWav(Buffer.concat([data, Buffer.alloc(MIN_ENGINE_SAMPLES * BYTES_PER_SAMPLE - data.length)])),
  );
  return padded;
}

/** The samples of a 16 kHz mono 16-bit PCM WAV (whole samples), or null for anything else. */
function pcmData(bytes: Buffer): Buffer | null {
  const wav = wavLayout(bytes, bytes.length);
  if (!wav || wav.audioFormat !== 1 || wav.channels !== 1 || wav.sampleRate !== SAMPLE_RATE) return null;
  if (wav.bitsPerSample !== 16) return null;
  const dataBytes = wav.dataBytes - (wav.dataBytes % BYTES_PER_SAMPLE);
  return bytes.subarray(wav.dataOffset, wav.dataOffset + dataBytes);
}
