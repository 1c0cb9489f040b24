import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { MediaError, isAbortError, probeAudio } from '../src';
import { ffmpeg, lavfi, make, scratchFolder, testEnv } from './media-test-env';

describe('probeAudio (real ffprobe)', () => {
  const { file } = scratchFolder();

  beforeAll(() => {
    // A video with an audio track (a 3 s picture, 2.5 s of tone).
    ffmpeg(
      lavfi('testsrc=duration=3:size=160x120:rate=10'),
      lavfi('sine=frequency=440:duration=2.5'),
      ['-c:v', 'libx264', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest'],
      file('video.mp4'),
    );
    ffmpeg(
      lavfi('testsrc=duration=1:size=160x120:rate=10'),
      ['-c:v', 'libx264', '-pix_fmt', 'yuv420p'],
      file('silent-video.mp4'),
    );
    make('sox', ['-n', '-r', '44100', '-c', '2', file('tone.flac'), 'synth', '1.5', 'sine', '300']);
    ffmpeg(lavfi('sine=duration=1.5'), ['-c:a', 'libmp3lame'], file('tone.mp3'));
    // WebM written to a pipe records no duration, like a browser's MediaRecorder.
    const piped = spawnSync('ffmpeg', [
      '-v',
      'error',
      ...lavfi('sine=duration=3'),
      '-c:a',
      'libopus',
      '-f',
      'webm',
      'pipe:1',
    ]);
    writeFileSync(file('piped.webm'), piped.stdout as Buffer);
    // Fixed pseudo-random bytes: random input must not be probed as audio by chance.
    const bytes = Buffer.alloc(64 * 1024);
    for (let i = 0, x = 12345; i < bytes.length; i++)
      bytes[i] = (x = (x * 1103515245 + 12345) & 0x7fffffff) >> 16;
    writeFileSync(file('noise.bin'), bytes);
  });

  it('reads a WAV file', async () => {
    await expect(probeAudio(testEnv.jfkWav)).resolves.toEqual({
      durationSeconds: 11,
      formatName: 'wav',
      hasAudio: true,
      audioCodec: 'pcm_s16le',
      channels: 1,
      channelLayout: null,
    });
  });

  it('reads the audio track of a video file', async () => {
    const result = await probeAudio(file('video.mp4'));
    expect(result).toMatchObject({
      formatName: 'mov,mp4,m4a,3gp,3g2,mj2',
      hasAudio: true,
      audioCodec: 'aac',
    });
    expect(result.durationSeconds).toBeCloseTo(2.5, 1);
  });

  it.each([
    ['tone.mp3', 'mp3', 'mp3'],
    ['tone.flac', 'flac', 'flac'],
  ])('reads %s', async (name, formatName, audioCodec) => {
    const result = await probeAudio(file(name));
    expect(result).toMatchObject({ formatName, audioCodec });
    expect(result.durationSeconds).toBeCloseTo(1.5, 1);
  });

  it('measures the duration when the container does not record it', async () => {
    const result = await probeAudio(file('piped.webm'));
    expect(result).toMatchObject({ formatName: 'matroska,webm', audioCodec: 'opus' });
    expect(result.durationSeconds).toBeCloseTo(3, 1);
  });

  it('rejects random bytes as audio_invalid, with ffprobe stderr attached', async () => {
    const error = (await probeAudio(file('noise.bin')).catch((e: unknown) => e)) as MediaError;
    expect(error).toBeInstanceOf(MediaError);
    expect(error).toMatchObject({ code: 'audio_invalid', transient: false });
    expect(error.stderr).toMatch(/Invalid data/);
  });

  it('rejects a video without an audio stream as audio_invalid', async () => {
    await expect(probeAudio(file('silent-video.mp4'))).rejects.toMatchObject({
      code: 'audio_invalid',
      message: 'The file has no audio stream',
    });
  });

  it('rejects with an abort error when aborted', async () => {
    const error = await probeAudio(testEnv.jfkWav, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(isAbortError(error)).toBe(true);
  });
});
