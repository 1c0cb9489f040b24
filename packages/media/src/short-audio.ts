import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

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

/** The samples of a 16 kHz mono 16-bit PCM WAV, or null for anything else. */
function pcmData(bytes: Buffer): Buffer | null {
  if (
    bytes.length < 12 ||
    bytes.toString('ascii', 0, 4) !== 'RIFF' ||
    bytes.toString('ascii', 8, 12) !== 'WAVE'
  )
    return null;
  let plain = false;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = bytes.toString('ascii', at, at + 4);
    const size = bytes.readUInt32LE(at + 4);
    if (id === 'fmt ' && at + 24 <= bytes.length) {
      plain =
        bytes.readUInt16LE(at + 8) === 1 &&
        bytes.readUInt16LE(at + 10) === 1 &&
        bytes.readUInt32LE(at + 12) === SAMPLE_RATE &&
        bytes.readUInt16LE(at + 22) === 16;
    }
    if (id === 'data') {
      if (!plain) return null;
      // A size never filled in (0 or 0xFFFFFFFF): the rest of the file.
      const end = size === 0 || at + 8 + size > bytes.length ? bytes.length : at + 8 + size;
      const data = bytes.subarray(at + 8, end);
      return data.subarray(0, data.length - (data.length % BYTES_PER_SAMPLE));
    }
    at += 8 + size + (size % 2);
  }
  return null;
}

/** A mono 16-bit PCM WAV of `data` (little-endian samples) with a plain 44-byte header. */
export function pcmWav(data: Buffer, sampleRate: number = SAMPLE_RATE): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * BYTES_PER_SAMPLE, 28);
  header.writeUInt16LE(BYTES_PER_SAMPLE, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
