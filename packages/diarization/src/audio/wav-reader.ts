import { readFile } from 'node:fs/promises';

/** Mono PCM audio as floats in [-1, 1). */
export interface Audio {
  samples: Float32Array;
  sampleRate: number;
}

export class WavFormatError extends Error {
  override name = 'WavFormatError';
}

const PCM = 1;
const EXTENSIBLE = 0xfffe;

/**
 * Parses a RIFF/WAVE buffer holding 16-bit little-endian PCM, mono. Walks the chunk list rather
 * than assuming a 44-byte header: ffmpeg and sox may write LIST or fact chunks before `data`.
 */
export function parseWav(buf: Buffer): Audio {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') {
    throw new WavFormatError('not a RIFF/WAVE file');
  }
  let format: { tag: number; channels: number; sampleRate: number; bits: number } | undefined;
  let offset = 12;
  while (offset + 8 <= buf.length) {
    const id = buf.toString('ascii', offset, offset + 4);
    const size = buf.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (size < 16) throw new WavFormatError('fmt chunk too short');
      format = {
        tag: buf.readUInt16LE(body),
        channels: buf.readUInt16LE(body + 2),
        sampleRate: buf.readUInt32LE(body + 4),
        bits: buf.readUInt16LE(body + 14),
      };
      // WAVE_FORMAT_EXTENSIBLE keeps the real format tag in the first two bytes of the GUID.
      if (format.tag === EXTENSIBLE && size >= 26) format.tag = buf.readUInt16LE(body + 24);
    } else if (id === 'data') {
      if (!format) throw new WavFormatError('data chunk before fmt chunk');
      if (format.tag !== PCM || format.bits !== 16 || format.channels !== 1) {
        throw new WavFormatError(
          `expected 16-bit PCM mono, got format ${format.tag}, ${format.bits} bits, ${format.channels} channels`,
        );
      }
      // A streamed WAV (ffmpeg to a pipe) may carry a 0 or 0xFFFFFFFF size: take what is there.
      const end = size === 0 || body + size > buf.length ? buf.length : body + size;
      return { samples: pcm16ToFloat(buf.subarray(body, end)), sampleRate: format.sampleRate };
    }
    offset = body + size + (size % 2); // chunks are word-aligned
  }
  throw new WavFormatError('no data chunk');
}

export async function readWav(path: string): Promise<Audio> {
  return parseWav(await readFile(path));
}

function pcm16ToFloat(bytes: Buffer): Float32Array {
  const count = Math.floor(bytes.length / 2);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = bytes.readInt16LE(i * 2) / 32768;
  return out;
}
