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

  it('passes aborts and foreign errors through', () => {
    const abort = new MediaAbortError();
    const other = new TypeError('x');
    expect(ffmpegFailure(abort, 'decode')).toBe(abort);
    expect(ffmpegFailure(other, 'decode')).toBe(other);
  });
});
