import { existsSync, statSync, writeFileSync } from 'node:fs';
import { AUDIO_CONTAINERS, AUDIO_FORMATS, type AudioFormat } from '@hark/core';
import { decodeToWav, isAbortError, probeAudio, runProcess } from '../src';
import { ffmpeg, lavfi, scratchFolder, testEnv } from './media-test-env';

/** Sample rate, channels and codec of a file, read back with ffprobe. */
async function streamOf(path: string) {
  const args = [
    '-v',
    'error',
    '-select_streams',
    'a:0',
    '-show_entries',
    'stream=sample_rate,channels,codec_name',
    '-of',
    'json',
    path,
  ];
  const { stdout } = await runProcess('ffprobe', args);
  return (JSON.parse(stdout) as { streams: unknown[] }).streams[0];
}

describe('decodeToWav (real ffmpeg)', () => {
  const { file } = scratchFolder();

  beforeAll(() => {
    ffmpeg(
      lavfi('testsrc=duration=2:size=160x120:rate=10'),
      lavfi('sine=frequency=440:duration=2'),
      ['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-ac', '2', '-ar', '44100'],
      file('video.mp4'),
    );
    writeFileSync(file('noise.bin'), Buffer.alloc(32 * 1024, 0x5a));
  });

  it('decodes the audio of a stereo 44.1 kHz video to 16 kHz mono s16le WAV', async () => {
    const out = file('video.wav');
    const result = await decodeToWav(file('video.mp4'), out);
    expect(result.outputPath).toBe(out);
    expect(result.durationSeconds).toBeCloseTo(2, 1);
    await expect(streamOf(out)).resolves.toEqual({
      codec_name: 'pcm_s16le',
      sample_rate: '16000',
      channels: 1,
    });
    await expect(probeAudio(out)).resolves.toMatchObject({ formatName: 'wav', audioCodec: 'pcm_s16le' });
  });

  it('decodes real speech to exactly its length', async () => {
    await expect(decodeToWav(testEnv.speech60Wav, file('speech.wav'))).resolves.toMatchObject({
      durationSeconds: 60,
    });
  });

  it('maxOutputBytes: the WAV stops growing there and the result says outOfRoom; a WAV that fits is whole', async () => {
    // 60 s is 1,920,044 bytes of WAV.
    const cut = await decodeToWav(testEnv.speech60Wav, file('room.wav'), { maxOutputBytes: 500_000 });
    expect(cut).toMatchObject({ outOfRoom: true, truncated: false });
    expect(statSync(file('room.wav')).size).toBeLessThan(520_000);
    await expect(
      decodeToWav(testEnv.speech60Wav, file('room.wav'), { maxOutputBytes: 2_000_000 }),
    ).resolves.toMatchObject({ outOfRoom: false, durationSeconds: 60 });
  });

  it('rejects undecodable input as audio_invalid and leaves no output', async () => {
    const out = file('noise.wav');
    await expect(decodeToWav(file('noise.bin'), out)).rejects.toMatchObject({
      code: 'audio_invalid',
      transient: false,
    });
    expect(existsSync(out)).toBe(false);
  });

  it('rejects with an abort error when aborted', async () => {
    const error = await decodeToWav(testEnv.jfkWav, file('aborted.wav'), {
      signal: AbortSignal.abort(),
    }).catch((e: unknown) => e);
    expect(isAbortError(error)).toBe(true);
    expect(existsSync(file('aborted.wav'))).toBe(false);
  });
});

/**
 * One file per container GET /v1/limits advertises, made with ffmpeg (AMR by hand: Debian's
 * ffmpeg has no AMR encoder): 1.5 s of tone, the video ones with a picture track too.
 */
const FIXTURES = {
  wav: ['-c:a', 'pcm_s16le', '-f', 'wav'],
  mp3: ['-c:a', 'libmp3lame', '-f', 'mp3'],
  flac: ['-c:a', 'flac', '-f', 'flac'],
  ogg: ['-c:a', 'libvorbis', '-f', 'ogg'],
  opus: ['-c:a', 'libopus', '-f', 'opus'],
  m4a: ['-c:a', 'aac', '-f', 'ipod'],
  aac: ['-c:a', 'aac', '-f', 'adts'],
  webm: ['-c:a', 'libopus', '-f', 'webm'],
  mp4: ['video', '-c:a', 'aac', '-f', 'mp4'],
  mov: ['video', '-c:a', 'pcm_s16le', '-f', 'mov'],
  mkv: ['video', '-c:a', 'libvorbis', '-f', 'matroska'],
  avi: ['video', '-c:a', 'libmp3lame', '-f', 'avi'],
  amr: 'by hand',
  aiff: ['-c:a', 'pcm_s16be', '-f', 'aiff'],
  wma: ['-c:a', 'wmav2', '-f', 'asf'],
} as const satisfies Record<AudioFormat, readonly string[] | 'by hand'>;

/** AMR-NB: the magic line, then 20 ms frames of mode 7 (12.2 kbit/s: a header byte and 31 bytes). */
function amrFile(seconds: number): Buffer {
  const frames = [];
  for (let i = 0, x = 7; i < seconds * 50; i++) {
    const frame = Buffer.alloc(32);
    frame[0] = 0x3c;
    for (let b = 1; b < 32; b++) frame[b] = (x = (x * 1103515245 + 12345) & 0x7fffffff) >> 16;
    frames.push(frame);
  }
  return Buffer.concat([Buffer.from('#!AMR\n', 'ascii'), ...frames]);
}

describe('every advertised container format probes and decodes (real ffmpeg)', () => {
  const scratch = scratchFolder();
  const file = (format: string) => scratch.file(`tone.${format}`);

  beforeAll(() => {
    for (const format of AUDIO_FORMATS) {
      const fixture: readonly string[] | 'by hand' = FIXTURES[format];
      if (fixture === 'by hand') {
        writeFileSync(file(format), amrFile(1.5));
        continue;
      }
      const video = fixture[0] === 'video';
      ffmpeg(
        video ? lavfi('testsrc=duration=1.5:size=160x120:rate=10') : [],
        lavfi('sine=frequency=440:duration=1.5:sample_rate=44100'),
        video ? ['-c:v', 'libx264', '-pix_fmt', 'yuv420p'] : [],
        fixture.slice(video ? 1 : 0),
        file(format),
      );
    }
  });

  it.each(AUDIO_FORMATS.map((f) => [f, AUDIO_CONTAINERS[f]]))(
    '%s (ffmpeg demuxer %s)',
    async (format, demuxer) => {
      const probed = await probeAudio(file(format));
      expect(probed.formatName.split(',')).toContain(demuxer);
      expect(probed.durationSeconds).toBeGreaterThan(1.4);
      expect(probed.durationSeconds).toBeLessThan(1.8);
      const decoded = await decodeToWav(file(format), scratch.file(`${format}.wav`));
      expect(decoded.truncated).toBe(false);
      expect(decoded.durationSeconds).toBeGreaterThan(1.4);
      expect(decoded.durationSeconds).toBeLessThan(1.8);
    },
  );
});
