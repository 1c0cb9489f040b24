import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseWav, WavBlocks, WavFormatError } from './wav-reader';

function wav(
  samples: number[],
  opts: { channels?: number; bits?: number; extraChunk?: boolean; format?: number } = {},
): Buffer {
  const channels = opts.channels ?? 1;
  const bits = opts.bits ?? 16;
  const data = Buffer.alloc(samples.length * 2);
  samples.forEach((s, i) => data.writeInt16LE(s, i * 2));
  const fmt = Buffer.alloc(24);
  fmt.write('fmt ', 0, 'ascii');
  fmt.writeUInt32LE(16, 4);
  fmt.writeUInt16LE(opts.format ?? 1, 8);
  fmt.writeUInt16LE(channels, 10);
  fmt.writeUInt32LE(16000, 12);
  fmt.writeUInt32LE(16000 * 2 * channels, 16);
  fmt.writeUInt16LE(2 * channels, 20);
  fmt.writeUInt16LE(bits, 22);
  // An odd-sized LIST chunk checks the word-alignment padding.
  const list = opts.extraChunk
    ? Buffer.concat([Buffer.from('LIST'), Buffer.from([3, 0, 0, 0]), Buffer.from('abc'), Buffer.from([0])])
    : Buffer.alloc(0);
  const dataHeader = Buffer.alloc(8);
  dataHeader.write('data', 0, 'ascii');
  dataHeader.writeUInt32LE(data.length, 4);
  const body = Buffer.concat([Buffer.from('WAVE'), fmt, list, dataHeader, data]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'ascii');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}

describe('parseWav', () => {
  it('reads 16-bit mono PCM as floats in [-1, 1)', () => {
    const audio = parseWav(wav([0, 16384, -32768, 32767]));
    expect(audio.sampleRate).toBe(16000);
    expect(Array.from(audio.samples)).toEqual([0, 0.5, -1, 32767 / 32768]);
  });

  it('skips chunks before data, including odd-sized ones', () => {
    expect(Array.from(parseWav(wav([100, -100], { extraChunk: true })).samples)).toEqual([
      100 / 32768,
      -100 / 32768,
    ]);
  });

  it('accepts WAVE_FORMAT_EXTENSIBLE headers written by ffmpeg for PCM', () => {
    const buf = wav([1, 2]);
    const ext = Buffer.alloc(buf.length + 10);
    buf.copy(ext, 0, 0, 20);
    ext.writeUInt32LE(26, 16); // fmt size
    buf.copy(ext, 20, 20, 36); // the 16 standard bytes
    ext.writeUInt16LE(0xfffe, 20);
    ext.writeUInt16LE(8, 36); // cbSize
    ext.writeUInt16LE(16, 38); // valid bits
    ext.writeUInt32LE(4, 40); // channel mask
    ext.writeUInt16LE(1, 44); // sub-format: PCM
    buf.copy(ext, 46, 36);
    expect(parseWav(ext.subarray(0, 46 + buf.length - 36)).samples.length).toBe(2);
  });

  it('rejects what the pipeline cannot use', () => {
    expect(() => parseWav(Buffer.from('not a wav file at all'))).toThrow(WavFormatError);
    expect(() => parseWav(wav([1, 2], { channels: 2 }))).toThrow(/mono|channels/);
    expect(() => parseWav(wav([1, 2], { bits: 24 }))).toThrow(/16-bit/);
    expect(() => parseWav(wav([1, 2], { format: 3 }))).toThrow(WavFormatError);
    expect(() => parseWav(wav([]).subarray(0, 36))).toThrow(/no data/);
  });
});

describe('WavBlocks', () => {
  it('reads any range of the samples from the file, the same as parseWav, and fewer past the end', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hark-wav-'));
    try {
      const samples = Array.from({ length: 1000 }, (_, i) => (i * 37) % 30000);
      const file = path.join(dir, 'a.wav');
      await writeFile(file, wav(samples, { extraChunk: true }));
      const whole = parseWav(wav(samples, { extraChunk: true })).samples;
      const blocks = await WavBlocks.open(file);
      try {
        expect([blocks.sampleRate, blocks.length]).toEqual([16000, 1000]);
        expect(Array.from(await blocks.read(0, 1000))).toEqual(Array.from(whole));
        expect(Array.from(await blocks.read(990, 100))).toEqual(Array.from(whole.subarray(990)));
        expect((await blocks.read(1000, 5)).length).toBe(0);
      } finally {
        await blocks.close();
      }
      // A streamed WAV's data size (0) reads to the end of the file.
      const streamed = wav(samples);
      streamed.writeUInt32LE(0, streamed.indexOf('data') + 4);
      await writeFile(file, streamed);
      const s = await WavBlocks.open(file);
      expect(s.length).toBe(1000);
      await s.close();
      await writeFile(file, 'not a wav');
      await expect(WavBlocks.open(file)).rejects.toThrow(WavFormatError);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
