import { ffmpegFailure } from './ffmpeg-tools';
import { MediaAbortError } from './media-error';
import { ProcessError } from './process-runner';

describe('ffmpegFailure', () => {
  it.each([
    ['a refused input', new ProcessError('e', 'ffmpeg', 1, null, 'Invalid data found'), 'audio_invalid', false],
    ['a full disk', new ProcessError('e', 'ffmpeg', 1, null, 'Error writing trailer: No space left on device'), 'engine_failed', true],
    ['a signal kill', new ProcessError('e', 'ffmpeg', null, 'SIGKILL', ''), 'engine_failed', true],
    ['a timeout', new ProcessError('e', 'ffmpeg', null, 'SIGKILL', '', null, true), 'engine_failed', true],
    ['a missing binary', new ProcessError('e', 'ffmpeg', null, null, '', 'ENOENT'), 'engine_failed', false],
  ])('maps %s to %s (transient: %s)', (_name, error, code, transient) => {
    expect(ffmpegFailure(error, 'decode')).toMatchObject({ name: 'MediaError', code, transient, cause: error });
  });

  it('passes aborts and foreign errors through', () => {
    const abort = new MediaAbortError();
    const other = new TypeError('x');
    expect(ffmpegFailure(abort, 'decode')).toBe(abort);
    expect(ffmpegFailure(other, 'decode')).toBe(other);
  });
});
