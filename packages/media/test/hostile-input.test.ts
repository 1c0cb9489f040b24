import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  MediaError,
  TOOL_ADDRESS_SPACE_BYTES,
  decodeToWav,
  probeAudio,
  runProcess,
  wavSizeLimit,
  type RunProcess,
} from '../src';
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
      // And the audio track's own length (its DURATION tag, which the probe reads first).
      const tag = bytes.indexOf('01:00:00.000000000');
      expect(tag).toBeGreaterThan(0);
      bytes.write('00:00:01.000000000', tag, 'ascii');
      writeFileSync(out('lying.mkv'), bytes);
    });

    it('probes as the 1 s it declares', async () => {
      await expect(probeAudio(out('lying.mkv'))).resolves.toMatchObject({ durationSeconds: 1 });
    });

    it('decodes only to a second past maxSeconds, says truncated, and writes at most the size limit', async () => {
      const wav = out('lying.wav');
      const result = await decodeToWav(out('lying.mkv'), wav, { maxSeconds: 5 });
      expect(result).toEqual({ outputPath: wav, durationSeconds: 6, truncated: true, outOfRoom: false });
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

// The audit of crafted files: valid audio wrapped in what made probing fail or run away.
describe('valid audio in a hostile wrapping (real ffmpeg and ffprobe)', () => {
  const { file: out } = scratchFolder();

  /** ID3v2.3 tag of `frames` TXXX frames of `bytes` bytes each. */
  const id3 = (frames: number, bytes: number) => {
    const body = Buffer.concat(
      Array.from({ length: frames }, (_, i) => {
        const text = Buffer.concat([Buffer.from(`\0key${i}\0`, 'latin1'), Buffer.alloc(bytes, 'A')]);
        const head = Buffer.alloc(10);
        head.write('TXXX', 0, 'ascii');
        head.writeUInt32BE(text.length, 4);
        return Buffer.concat([head, text]);
      }),
    );
    const head = Buffer.from([0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0, 0]);
    // Synchsafe size: 7 bits a byte.
    for (let i = 0; i < 4; i++) head[9 - i] = (body.length >> (7 * i)) & 0x7f;
    return Buffer.concat([head, body]);
  };

  /** PCM WAV, 16-bit at 16 kHz, `channels` channels and no channel mask, a tone in the first. */
  const layoutlessWav = (channels: number, seconds: number) => {
    const frames = 16000 * seconds;
    const data = Buffer.alloc(frames * channels * 2);
    for (let i = 0; i < frames; i++) data.writeInt16LE(Math.round(8000 * Math.sin(i / 10)), i * channels * 2);
    const header = Buffer.alloc(44);
    header.write('RIFF', 0, 'ascii');
    header.writeUInt32LE(36 + data.length, 4);
    header.write('WAVEfmt ', 8, 'ascii');
    header.writeUInt32LE(16, 16);
    header.writeUInt16LE(1, 20); // plain PCM: no WAVEFORMATEXTENSIBLE channel mask
    header.writeUInt16LE(channels, 22);
    header.writeUInt32LE(16000, 24);
    header.writeUInt32LE(16000 * channels * 2, 28);
    header.writeUInt16LE(channels * 2, 32);
    header.writeUInt16LE(16, 34);
    header.write('data', 36, 'ascii');
    header.writeUInt32LE(data.length, 40);
    return Buffer.concat([header, data]);
  };

  beforeAll(() => {
    // A valid 2 s MP3 behind 36 MB of ID3 text (4 TXXX frames of 9 MB).
    ffmpeg(lavfi('sine=frequency=440:duration=2'), ['-id3v2_version', '0'], out('plain.mp3'));
    writeFileSync(out('bigtag.mp3'), Buffer.concat([id3(4, 9_000_000), readFileSync(out('plain.mp3'))]));
    // 2 s of Opus and a subtitle whose one cue comes at 10:30:00.
    writeFileSync(out('late.srt'), '1\n10:30:00,000 --> 10:30:01,000\nlate\n');
    ffmpeg(
      lavfi('sine=frequency=440:duration=2'),
      ['-i', out('late.srt')],
      ['-c:a', 'libopus', '-c:s', 'srt'],
      out('latesub.mkv'),
    );
    // 2 s of FLAC beside 3 video tracks of one 8192x8192 PNG frame each (200 MB decoded apiece).
    ffmpeg(
      lavfi('sine=frequency=440:duration=2'),
      lavfi('color=black:s=8192x8192:d=1:r=1'),
      ['-map', '0:a', '-map', '1:v', '-map', '1:v', '-map', '1:v', '-c:a', 'flac', '-c:v', 'png'],
      out('png3.mkv'),
    );
    writeFileSync(out('12ch.wav'), layoutlessWav(12, 1));
  });

  it('probes an MP3 with 36 MB of ID3 tags (ffprobe used to print them all past its stdout limit)', async () => {
    expect(statSync(out('bigtag.mp3')).size).toBeGreaterThan(32 * 1024 * 1024);
    const probe = await probeAudio(out('bigtag.mp3'));
    expect(probe).toMatchObject({ formatName: 'mp3', audioCodec: 'mp3' });
    expect(probe.durationSeconds).toBeCloseTo(2, 0);
    const wav = await decodeToWav(out('bigtag.mp3'), out('bigtag.wav'));
    expect(wav.durationSeconds).toBeCloseTo(2, 1);
  });

  it("takes a Matroska audio track's own length, not the container's (a subtitle cue at 10:30:00)", async () => {
    const probe = await probeAudio(out('latesub.mkv'));
    expect(probe.durationSeconds).toBeGreaterThan(1.9);
    expect(probe.durationSeconds).toBeLessThan(2.1);
  });

  it('probes and decodes the audio beside huge video frames without decoding them all', async () => {
    // /usr/bin/time inside the runner (and its prlimit) reports the tool's peak RSS.
    const peaks: number[] = [];
    const timed: RunProcess = async (command, args, options) => {
      const result = await runProcess('/usr/bin/time', ['-f', 'peak_kb=%M', command, ...args], options);
      peaks.push(Number(/peak_kb=(\d+)/.exec(result.stderr)?.[1]));
      return result;
    };
    // GNU time: scripts/test.sh installs it (Debian's `time`), so the bound below is always measured.
    expect(existsSync('/usr/bin/time')).toBe(true);
    const probe = await probeAudio(out('png3.mkv'), { run: timed });
    expect(probe).toMatchObject({ audioCodec: 'flac', channels: 1 });
    expect(probe.durationSeconds).toBeCloseTo(2, 1);
    const wav = await decodeToWav(out('png3.mkv'), out('png3.wav'), { run: timed });
    expect(wav.durationSeconds).toBeCloseTo(2, 1);
    console.log(`peak RSS of ffprobe and ffmpeg beside 3 PNG frames of 8192x8192: ${peaks.join(', ')} KB`);
    // Unbounded, each peaked at 650 MB for these 3 frames (1.6 GB for 8).
    for (const peak of peaks) expect(peak * 1024).toBeLessThan(TOOL_ADDRESS_SPACE_BYTES);
    expect(peaks[1]).toBeLessThan(150 * 1024);
  });

  it('averages 12 channels without a layout to mono (ffmpeg 5.1 refuses -ac 1 alone for them)', async () => {
    const probe = await probeAudio(out('12ch.wav'));
    expect(probe).toMatchObject({ channels: 12, channelLayout: null, durationSeconds: 1 });
    // ffmpeg 5.1 (Debian 12): "Rematrix is needed between 12 channels and mono"; 7.1 (Debian 13)
    // mixes them itself. Either way the worker asks for the mean, so both give the same audio.
    const wav = await decodeToWav(out('12ch.wav'), out('12ch-mono.wav'), {
      layoutlessChannels: probe.channels,
    });
    expect(wav.durationSeconds).toBe(1);
    // The tone of the first channel, at a twelfth of its level.
    const samples = readFileSync(out('12ch-mono.wav')).subarray(44);
    let peak = 0;
    for (let i = 0; i + 1 < samples.length; i += 2) peak = Math.max(peak, Math.abs(samples.readInt16LE(i)));
    expect(peak).toBeGreaterThan(8000 / 12 - 100);
    expect(peak).toBeLessThan(8000 / 12 + 100);
  });
});
