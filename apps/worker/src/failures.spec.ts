import { DownloadError } from '@hark/http';
import { MediaError } from '@hark/media';
import { TranscriptFailure, toFailure } from './failures';

describe('toFailure', () => {
  it('keeps a TranscriptFailure as it is', () => {
    const f = new TranscriptFailure('audio_mismatch', 'x', false);
    expect(toFailure(f)).toBe(f);
  });

  it('download errors keep their code and safe message; only server-side trouble is retried', () => {
    const notFound = new DownloadError(
      'audio_unreachable',
      'The audio URL answered with HTTP status 404',
      'http_status',
      0,
    );
    expect(toFailure(notFound)).toMatchObject({
      code: 'audio_unreachable',
      retryable: false,
      message: `${notFound.message}.`,
    });
    const busy = new DownloadError(
      'audio_unreachable',
      'The audio URL answered with HTTP status 503',
      'http_status',
      0,
    );
    expect(toFailure(busy).retryable).toBe(true);
    const reset = new DownloadError('audio_unreachable', 'x', 'connection_reset', 10);
    expect(toFailure(reset).retryable).toBe(true);
    const blocked = new DownloadError('audio_unreachable', 'x', 'blocked_address', 0);
    expect(toFailure(blocked).retryable).toBe(false);
    const big = new DownloadError('audio_too_large', 'The audio is larger than 10 bytes', 'too_large', 11);
    expect(toFailure(big)).toMatchObject({ code: 'audio_too_large', retryable: false });
  });

  it('undecodable audio is permanent, and tool output never reaches the message', () => {
    const raw = new MediaError(
      'audio_invalid',
      'ffprobe rejected the input: file:/tmp/hark-worker/tr_x/source: Invalid data',
      {
        transient: false,
      },
    );
    expect(toFailure(raw)).toMatchObject({
      code: 'audio_invalid',
      retryable: false,
      message: 'The audio could not be decoded.',
    });
    const noAudio = new MediaError('audio_invalid', 'The file has no audio stream', { transient: false });
    expect(toFailure(noAudio).message).toBe('The file has no audio stream.');
    const rate = new MediaError('audio_invalid', 'The audio has an unsupported sample rate', {
      transient: false,
    });
    expect(toFailure(rate)).toMatchObject({
      retryable: false,
      message: 'The audio has an unsupported sample rate.',
    });
  });

  it('engine failures, even "permanent" ones, and unknown errors are retried as engine_failed', () => {
    const setup = new MediaError('engine_failed', '/opt/whisper-cli exited with code 2', {
      transient: false,
    });
    expect(toFailure(setup)).toMatchObject({
      code: 'engine_failed',
      retryable: true,
      message: 'Transcription failed after every retry.',
    });
    expect(toFailure(new Error('connect ECONNREFUSED 10.0.0.5:5432'))).toMatchObject({
      code: 'engine_failed',
      retryable: true,
    });
    expect(toFailure(new Error('connect ECONNREFUSED 10.0.0.5:5432')).message).not.toMatch(/10\.0/);
  });
});
