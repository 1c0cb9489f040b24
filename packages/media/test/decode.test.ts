import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeToWav, isAbortError, probeAudio, runProcess } from '../src';
import { make, scratchDir, testEnv } from './media-test-env';

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
  const { dir, cleanup } = scratchDir();
  const file = (name: string) => join(dir, name);
  afterAll(cleanup);

  beforeAll(() => {
    make('ffmpeg', [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'testsrc=duration=2:size=160x120:rate=10',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=2',
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-ac',
      '2',
      '-ar',
      '44100',
      '-y',
      file('video.mp4'),
    ]);
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
