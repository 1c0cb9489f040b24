import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MediaError, decodeToWav, probeAudio, wavSizeLimit } from '../src';
import { ffmpeg, lavfi, scratchFolder } from './media-test-env';

// Issue 15, "Hostile media": inputs that made ffmpeg read files it was not given, or decode far
// more than the file declared. Every one is made here, from scratch, with the real tools.
describe('hostile input (real ffmpeg and ffprobe)', () => {
  const { dir, file: out } = scratchFolder();
  // Like the blob store: every upload side by side in one flat folder.
  const blobs = join(dir, 'blobs');
  const blob = (name: string) => join(blobs, name);

  beforeAll(() => {
    mkdirSync(blobs);
    // Someone else's upload, and a local file of a kind HLS accepts as a segment.
    ffmpeg(lavfi('sine=frequency=440:duration=2'), ['-f', 'wav'], blob('up_victim'));
    ffmpeg(lavfi('sine=frequency=300:duration=2'), out('secret.mp3'));
    writeFileSync(blob('up_concat'), 'ffconcat version 1.0\nfile up_victim\n');
    // 160 KB that probes as 3.7 s and decodes to two hours.
    writeFileSync(
      blob('up_bomb'),
      `ffconcat version 1.0\n${'file up_victim\nduration 0.001\n'.repeat(3700)}`,
    );
    // The playlist twice: as blobs are named (no extension), and named .m3u8, which ffmpeg 7 and
    // later need before their HLS demuxer will even look at it (ffmpeg 5, Debian 12's, does not):
    // the whitelist must refuse both on every version.
    const playlist = `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:2.0,\n${out('secret.mp3')}\n#EXT-X-ENDLIST\n`;
    writeFileSync(blob('up_hls'), playlist);
    writeFileSync(blob('up_hls.m3u8'), playlist);
  });

  const rejected = async (promise: Promise<unknown>) => {
    const error = (await promise.catch((e: unknown) => e)) as MediaError;
    expect(error).toBeInstanceOf(MediaError);
    expect(error).toMatchObject({ code: 'audio_invalid', transient: false });
    return error;
  };

  // Why ffmpeg refused: the whitelist, or (ffmpeg 7 and later, for the blob-named playlist) its
  // own HLS check, which wants a .m3u8 name before the whitelist is even asked.
  const WHITELIST = /not on whitelist/;
  const WHITELIST_OR_HLS_NAME = /not on whitelist|Not detecting m3u8\/hls with non standard extension/;
  const cases: [string, string, RegExp][] = [
    ['an ffconcat list naming another upload', 'up_concat', WHITELIST],
    ['an ffconcat list repeating an upload 3,700 times', 'up_bomb', WHITELIST],
    ['an HLS playlist named .m3u8 naming a local file', 'up_hls.m3u8', WHITELIST],
    ['an HLS playlist named as blobs are (no extension)', 'up_hls', WHITELIST_OR_HLS_NAME],
  ];

  it.each(cases)('probing %s fails audio_invalid: its demuxer is not allowed', async (_name, file, why) => {
    const error = await rejected(probeAudio(blob(file)));
    expect(error.stderr).toMatch(why);
  });

  it.each(cases)('decoding %s fails audio_invalid at once and writes nothing', async (_name, file, why) => {
    const started = Date.now();
    const error = await rejected(decodeToWav(blob(file), out(`${file}.wav`)));
    expect(error.stderr).toMatch(why);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(existsSync(out(`${file}.wav`))).toBe(false);
  });

  describe('audio longer than it declares', () => {
    beforeAll(() => {
      // An hour of silence (cheap: FLAC of zeros) whose Matroska header says 1 s.
      ffmpeg(lavfi('anullsrc=r=8000:cl=mono'), ['-t', '3600', '-c:a', 'flac'], out('hour.mkv'));
      const bytes = readFileSync(out('hour.mkv'));
      const at = bytes.indexOf(Buffer.from([0x44, 0x89, 0x88])); // Segment Info: Duration, 8-byte float
      expect(at).toBeGreaterThan(0);
      bytes.writeDoubleBE(1000, at + 3); // milliseconds
      writeFileSync(out('lying.mkv'), bytes);
    });

    it('probes as the 1 s it declares', async () => {
      await expect(probeAudio(out('lying.mkv'))).resolves.toMatchObject({ durationSeconds: 1 });
    });

    it('decodes only to a second past maxSeconds, says truncated, and writes at most the size limit', async () => {
      const wav = out('lying.wav');
      const result = await decodeToWav(out('lying.mkv'), wav, { maxSeconds: 5 });
      expect(result).toEqual({ outputPath: wav, durationSeconds: 6, truncated: true });
      expect(statSync(wav).size).toBeLessThanOrEqual(wavSizeLimit(5));
      expect(wavSizeLimit(5)).toBeLessThan(200 * 1024);
    });
  });

  describe('a WAV header with an absurd sample rate', () => {
    const absurd = () => {
      const samples = Buffer.alloc(32_000);
      const header = Buffer.alloc(44);
      header.write('RIFF', 0, 'ascii');
      header.writeUInt32LE(36 + samples.length, 4);
      header.write('WAVEfmt ', 8, 'ascii');
      header.writeUInt32LE(16, 16);
      header.writeUInt16LE(1, 20); // PCM
      header.writeUInt16LE(1, 22); // mono
      header.writeUInt32LE(2 ** 31 - 1, 24); // samples per second
      header.writeUInt32LE(0xfffffffe, 28); // bytes per second (wraps)
      header.writeUInt16LE(2, 32);
      header.writeUInt16LE(16, 34);
      header.write('data', 36, 'ascii');
      header.writeUInt32LE(samples.length, 40);
      return Buffer.concat([header, samples]);
    };
    beforeAll(() => writeFileSync(out('absurd.wav'), absurd()));

    it('is refused by the probe as audio_invalid', async () => {
      const error = await rejected(probeAudio(out('absurd.wav')));
      expect(error.message).toMatch(/sample rate/);
    });

    it('is refused by the decoder as audio_invalid, not as a transient memory failure', async () => {
      // ffmpeg's resampler cannot allocate for it: "Cannot allocate memory", exit code 1.
      const error = await rejected(decodeToWav(out('absurd.wav'), out('absurd-out.wav')));
      expect(error.stderr).toMatch(/Cannot allocate memory/);
    });
  });
});
