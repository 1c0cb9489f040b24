import type { TranscriptFailureCode } from '@hark/core';
import { DownloadError } from '@hark/http';
import { MediaError } from '@hark/media';

/** The spec's transcript failure codes (api-spec "Transcript failure codes"). */
export type FailureCode = TranscriptFailureCode;

/**
 * Why a transcription could not finish, in the caller's terms. `message` is stored on the
 * transcript and shown by the API, so it never carries a path, a host, a command line or raw
 * tool output; those stay on `cause` for the logs.
 */
export class TranscriptFailure extends Error {
  override readonly name = 'TranscriptFailure';
  constructor(
    readonly code: FailureCode,
    message: string,
    /** True when another attempt may succeed (network blip, engine crash, worker trouble). */
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const GENERIC_MESSAGE: Record<FailureCode, string> = {
  audio_too_long: 'The audio is longer than the longest accepted duration.',
  insufficient_balance: 'The audio is longer than the remaining balance covers; top up and submit again.',
  audio_unreachable: 'The audio URL could not be downloaded.',
  audio_invalid: 'The audio could not be decoded.',
  audio_too_large: 'The audio downloaded from the URL is larger than the limit.',
  audio_mismatch: 'The stored audio does not match the sha256 declared on the upload.',
  engine_failed: 'Transcription failed after every retry.',
};

/** Media messages written for people, with no path or tool output in them. */
const PLAIN_MEDIA_MESSAGES = new Set([
  'The file has no audio stream',
  'The audio stream holds no samples',
  'The audio has an unsupported sample rate',
  'The audio has too many channels',
]);

/** HTTP answers worth another try: the server may recover. */
const RETRYABLE_STATUS = /status (408|425|429|5\d\d)$/;
const RETRYABLE_KINDS = new Set([
  'timeout',
  'dns_failed',
  'connection_refused',
  'connection_reset',
  'request_failed',
]);

const sentence = (text: string) => (/[.!?]$/.test(text) ? text : `${text}.`);

export function failure(
  code: FailureCode,
  retryable = false,
  message = GENERIC_MESSAGE[code],
  cause?: unknown,
) {
  return new TranscriptFailure(code, message, retryable, cause === undefined ? undefined : { cause });
}

/**
 * Maps any error a job step threw onto a failure. Unknown errors (Postgres or Redis trouble, a
 * bug) are `engine_failed` and retryable: the spec's engine_failed is "failed after every retry".
 *
 * Every engine failure is retried, even ones @hark/media calls permanent (binary missing, model
 * not loadable): those are one replica's configuration, and a retry may land on a healthy one.
 */
export function toFailure(error: unknown): TranscriptFailure {
  if (error instanceof TranscriptFailure) return error;
  if (error instanceof DownloadError) {
    // DownloadError messages are written to be shown (no addresses, no raw error text).
    const retryable =
      error.code === 'audio_unreachable' &&
      (error.reason === 'http_status'
        ? RETRYABLE_STATUS.test(error.message)
        : RETRYABLE_KINDS.has(error.reason));
    return new TranscriptFailure(error.code, sentence(error.message), retryable, { cause: error });
  }
  if (error instanceof MediaError) {
    if (error.code === 'audio_invalid') {
      const message = PLAIN_MEDIA_MESSAGES.has(error.message)
        ? `${error.message}.`
        : GENERIC_MESSAGE.audio_invalid;
      return new TranscriptFailure('audio_invalid', message, false, { cause: error });
    }
    return failure('engine_failed', true, GENERIC_MESSAGE.engine_failed, error);
  }
  return failure('engine_failed', true, GENERIC_MESSAGE.engine_failed, error);
}

/** Short text for logs: what happened, with the tool's stderr summary where there is one. */
export function describeForLog(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { err: String(error) };
  const cause = (error as { cause?: unknown }).cause;
  const inner = cause instanceof Error ? cause : null;
  const stderr =
    inner instanceof MediaError ? inner.stderr : error instanceof MediaError ? error.stderr : null;
  return {
    err: error.message,
    ...(inner ? { cause: `${inner.name}: ${inner.message}` } : {}),
    ...(stderr ? { stderr: stderr.slice(-2000) } : {}),
  };
}
