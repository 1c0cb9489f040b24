/** A RIFF/WAVE file's `fmt ` fields and where its samples lie. */
export interface WavLayout {
  /** 1 for integer PCM. */
  audioFormat: number;
  channels: number;
  sampleRate: number;
  byteRate: number;
  bitsPerSample: number;
  /** Offset of the first sample byte. */
  dataOffset: number;
  /** Bytes of samples: the `data` chunk's size, or the rest of the file where a writer that could
   * not seek back left it unset (0 or 0xFFFFFFFF) or it runs past the end. */
  dataBytes: number;
}

/**
 * Walks the chunk list of a WAV file (`bytes`: its first bytes, at least up to the `data`
 * chunk's header; `size`: the whole file's) rather than assuming a 44-byte header. Null when it
 * is not RIFF/WAVE or has no `fmt ` chunk before its `data` chunk.
 */
export function wavLayout(bytes: Buffer, size: number): WavLayout | null {
  if (
    bytes.length < 12 ||
    bytes.toString('ascii', 0, 4) !== 'RIFF' ||
    bytes.toString('ascii', 8, 12) !== 'WAVE'
  ) {
    return null;
  }
  let fmt: Omit<WavLayout, 'dataOffset' | 'dataBytes'> | null = null;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = bytes.toString('ascii', at, at + 4);
    const chunkSize = bytes.readUInt32LE(at + 4);
    if (id === 'fmt ' && at + 24 <= bytes.length) {
      fmt = {
        audioFormat: bytes.readUInt16LE(at + 8),
        channels: bytes.readUInt16LE(at + 10),
        sampleRate: bytes.readUInt32LE(at + 12),
        byteRate: bytes.readUInt32LE(at + 16),
        bitsPerSample: bytes.readUInt16LE(at + 22),
      };
    }
    if (id === 'data') {
      if (!fmt) return null;
      const available = size - (at + 8);
      const dataBytes = chunkSize === 0 || chunkSize > available ? available : chunkSize;
      return { ...fmt, dataOffset: at + 8, dataBytes };
    }
    at += 8 + chunkSize + (chunkSize % 2);
  }
  return null;
}

/** A mono 16-bit PCM WAV of `data` (little-endian samples) with a plain 44-byte header. */
export function pcmWav(data: Buffer, sampleRate = 16_000): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
