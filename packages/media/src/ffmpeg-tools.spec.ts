import { ffmpegFailure } from './ffmpeg-tools';
import { MediaAbortError } from './media-error';
import { ProcessError } from './process-runner';

describe('ffmpegFailure', () => {
  it.each([
    [
      'a refused input',
      new ProcessError('e', { command: 'ffmpeg', exitCode: 1, signal: null, stderr: 'Invalid data found' }),
      'audio_invalid',
      false,
    ],
    [
      'a full disk',
      new ProcessError('e', {
        command: 'ffmpeg',
        exitCode: 1,
        signal: null,
        stderr: 'Error writing trailer: No space left on device',
      }),
      'engine_failed',
      true,
    ],
    [
      // A 2^31 Hz WAV header: the resampler asks for more memory than exists.
      'an allocation the input made absurd',
      new ProcessError('e', {
        command: 'ffmpeg',
        exitCode: 1,
        signal: null,
        stderr:
          'Error reinitializing filters!\nFailed to inject frame into filter network: Cannot allocate memory',
      }),
      'audio_invalid',
      false,
    ],
    [
      'a demuxer outside the allow-list',
      new ProcessError('e', {
        command: 'ffprobe',
        exitCode: 1,
        signal: null,
        stderr: "[concat @ 0x55] Format not on whitelist 'wav,mp3'",
      }),
      'audio_invalid',
      false,
    ],
    [
      'a signal kill',
      new ProcessError('e', { command: 'ffmpeg', exitCode: null, signal: 'SIGKILL', stderr: '' }),
      'engine_failed',
      true,
    ],
    [
      'a timeout',
      new ProcessError('e', {
        command: 'ffmpeg',
        exitCode: null,
        signal: 'SIGKILL',
        stderr: '',
        timedOut: true,
      }),
      'engine_failed',
      true,
    ],
    [
      'a missing binary',
      new ProcessError('e', {
        command: 'ffmpeg',
        exitCode: null,
        signal: null,
        stderr: '',
        spawnErrorCode: 'ENOENT',
      }),
      'engine_failed',
      false,
    ],
  ])('maps %s to %s (transient: %s)', (_name, error, code, transient) => {
    expect(ffmpegFailure(error, 'decode')).toMatchObject({
      name: 'MediaError',
      code,
      transient,
      cause: error,
    });
  });

  it('maps output past the stdout limit to a permanent audio_invalid', () => {
    const error = new ProcessError('ffprobe wrote more than 1024 bytes to stdout', {
      command: 'ffprobe',
      exitCode: null,
      signal: 'SIGKILL',
      stderr: '',
      stdoutOverflow: true,
    });
    expect(ffmpegFailure(error, 'probe')).toMatchObject({ code: 'audio_invalid', transient: false });
  });

  it('passes aborts and foreign errors through', () => {
    const abort = new MediaAbortError();
    const other = new TypeError('x');
    expect(ffmpegFailure(abort, 'decode')).toBe(abort);
    expect(ffmpegFailure(other, 'decode')).toBe(other);
  });
});
