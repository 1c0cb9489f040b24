import { type FileHandle, open, readFile } from 'node:fs/promises';

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

/** Where a WAV's samples are: 16-bit PCM mono from `dataOffset`, `dataBytes` long (null: to the end). */
export interface WavLayout {
  sampleRate: number;
  dataOffset: number;
  dataBytes: number | null;
}

/**
 * The layout of a RIFF/WAVE file holding 16-bit little-endian PCM, mono, from its first bytes (up
 * to and including the `data` chunk's header). Walks the chunk list rather than assuming a 44-byte
 * header: ffmpeg and sox may write LIST or fact chunks before `data`.
 */
export function wavLayout(buf: Buffer): WavLayout {
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
      if (size < 16 || body + 16 > buf.length) throw new WavFormatError('fmt chunk too short');
      format = {
        tag: buf.readUInt16LE(body),
        channels: buf.readUInt16LE(body + 2),
        sampleRate: buf.readUInt32LE(body + 4),
        bits: buf.readUInt16LE(body + 14),
      };
      // WAVE_FORMAT_EXTENSIBLE keeps the real format tag in the first two bytes of the GUID.
      if (format.tag === EXTENSIBLE && size >= 26 && body + 26 <= buf.length)
        format.tag = buf.readUInt16LE(body + 24);
    } else if (id === 'data') {
      if (!format) throw new WavFormatError('data chunk before fmt chunk');
      if (format.tag !== PCM || format.bits !== 16 || format.channels !== 1) {
        throw new WavFormatError(
          `expected 16-bit PCM mono, got format ${format.tag}, ${format.bits} bits, ${format.channels} channels`,
        );
      }
      // A streamed WAV (ffmpeg to a pipe) may carry a 0 or 0xFFFFFFFF size: take what is there.
      return {
        sampleRate: format.sampleRate,
        dataOffset: body,
        dataBytes: size === 0 || size === 0xffffffff ? null : size,
      };
    }
    offset = body + size + (size % 2); // chunks are word-aligned
  }
  throw new WavFormatError('no data chunk');
}

/** Parses a whole RIFF/WAVE buffer (see `wavLayout`). */
export function parseWav(buf: Buffer): Audio {
  const { sampleRate, dataOffset, dataBytes } = wavLayout(buf);
  const end = dataBytes === null || dataOffset + dataBytes > buf.length ? buf.length : dataOffset + dataBytes;
  return { samples: pcm16ToFloat(buf.subarray(dataOffset, end)), sampleRate };
}

export async function readWav(path: string): Promise<Audio> {
  return parseWav(await readFile(path));
}

/** Mono audio read a block at a time: its length in samples, and `read(start, count)` (fewer past the end). */
export interface SampleBlocks {
  readonly sampleRate: number;
  readonly length: number;
  read(start: number, count: number): Promise<Float32Array>;
  close(): Promise<void>;
}

/** Audio already in memory, as blocks. */
export function memoryBlocks(audio: Audio): SampleBlocks {
  return {
    sampleRate: audio.sampleRate,
    length: audio.samples.length,
    read: async (start, count) => audio.samples.subarray(start, start + count),
    close: async () => undefined,
  };
}

/** A WAV file read a block at a time (the whole file as floats is 230 MB an hour). */
export class WavBlocks implements SampleBlocks {
  private constructor(
    private readonly file: FileHandle,
    readonly sampleRate: number,
    private readonly dataOffset: number,
    readonly length: number,
  ) {}

  static async open(path: string): Promise<WavBlocks> {
    const file = await open(path, 'r');
    try {
      const head = Buffer.alloc(HEADER_BYTES);
      const { bytesRead } = await file.read(head, 0, HEADER_BYTES, 0);
      const layout = wavLayout(head.subarray(0, bytesRead));
      const available = (await file.stat()).size - layout.dataOffset;
      const bytes = layout.dataBytes === null ? available : Math.min(layout.dataBytes, available);
      return new WavBlocks(file, layout.sampleRate, layout.dataOffset, Math.max(0, Math.floor(bytes / 2)));
    } catch (error) {
      await file.close();
      throw error;
    }
  }

  async read(start: number, count: number): Promise<Float32Array> {
    const n = Math.max(0, Math.min(count, this.length - start));
    const buf = Buffer.alloc(n * 2);
    const { bytesRead } = await this.file.read(buf, 0, buf.length, this.dataOffset + start * 2);
    return pcm16ToFloat(buf.subarray(0, bytesRead));
  }

  close(): Promise<void> {
    return this.file.close();
  }
}

/** Enough for any header ffmpeg or sox writes before the samples. */
const HEADER_BYTES = 64 * 1024;

function pcm16ToFloat(bytes: Buffer): Float32Array {
  const count = Math.floor(bytes.length / 2);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = bytes.readInt16LE(i * 2) / 32768;
  return out;
}
