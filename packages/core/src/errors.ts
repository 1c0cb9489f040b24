/**
 * The one error type the API answers with. Every failure leaves the service as
 * `{error: {code, message, retryable, requestId, fields?}}` with the status from CODE_STATUS.
 */
export const CODE_STATUS = {
  validation: 400,
  chunk_empty: 400,
  upload_mismatch: 400,
  invalid_api_key: 401,
  insufficient_balance: 402,
  not_found: 404,
  upload_not_found: 404,
  upload_busy: 409,
  idempotency_conflict: 409,
  transcript_processing: 409,
  transcript_finished: 409,
  transcript_not_done: 409,
  no_webhook: 409,
  chunk_too_large: 413,
  upload_too_large: 413,
  upload_quota_exceeded: 413,
  payload_too_large: 413,
  headers_too_large: 431,
  request_timeout: 408,
  rate_limited: 429,
  concurrency_limit: 429,
  internal: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof CODE_STATUS;

/** Codes whose repetition can succeed without the caller changing anything. */
const RETRYABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'upload_busy',
  'request_timeout',
  'rate_limited',
  'concurrency_limit',
  'internal',
  'unavailable',
]);

const DEFAULT_MESSAGE: Record<ErrorCode, string> = {
  validation: 'The request has invalid fields; see `fields`.',
  chunk_empty: 'The chunk has no content.',
  upload_mismatch: 'The upload received a different number of bytes than declared in expectedBytes.',
  invalid_api_key: 'The API key is missing or invalid.',
  insufficient_balance: 'The account has no credits available.',
  not_found: 'No such transcript.',
  upload_not_found: 'No such upload.',
  upload_busy: 'Another chunk of this upload is still being written.',
  idempotency_conflict: 'This Idempotency-Key was already used with a different request body.',
  transcript_processing:
    'A processing transcript cannot be deleted; cancel it first or wait for it to finish.',
  transcript_finished: 'The transcript has already finished and cannot be canceled.',
  transcript_not_done: 'The transcript has no content: it failed or was canceled.',
  no_webhook: 'The transcript has no webhookUrl or has not finished.',
  chunk_too_large: 'The chunk is larger than 16 MiB.',
  upload_too_large: 'The upload would exceed 2 GiB.',
  upload_quota_exceeded:
    "The account's uploads not yet used by a transcript would pass its storage quota; transcribe them or let unused ones expire first.",
  payload_too_large: 'The request body is too large.',
  headers_too_large: 'The request header fields are too large.',
  request_timeout: 'The request was not received in full in time; send it again.',
  rate_limited: 'Too many requests; retry after the time in Retry-After.',
  concurrency_limit: 'The account already has the maximum number of transcriptions running.',
  internal: 'The service had an internal error; retry later.',
  unavailable: 'The service is temporarily unavailable; retry later.',
};

export class HarkError extends Error {
  readonly status: number;
  readonly retryable: boolean;

  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly fields?: Record<string, string>,
    /** Extra response headers, such as Retry-After. */
    readonly headers?: Record<string, string>,
    /** Overrides the code's default where one route differs (a subtitles export of a processing transcript). */
    retryable?: boolean,
  ) {
    super(message ?? DEFAULT_MESSAGE[code]);
    this.name = 'HarkError';
    this.status = CODE_STATUS[code];
    this.retryable = retryable ?? RETRYABLE.has(code);
  }

  static validation(fields: Record<string, string>): HarkError {
    return new HarkError('validation', undefined, fields);
  }
}

export function isHarkError(e: unknown): e is HarkError {
  return e instanceof HarkError;
}

export interface ErrorBody {
  error: {
    code: string;
    message: string;
    retryable: boolean;
    requestId: string;
    fields?: Record<string, string>;
  };
}

export function errorBody(err: HarkError, requestId: string): ErrorBody {
  return {
    error: {
      code: err.code,
      message: err.message,
      retryable: err.retryable,
      requestId,
      ...(err.fields ? { fields: err.fields } : {}),
    },
  };
}

/** api-spec "Transcript failure codes": `error.code` of a failed transcript (not HTTP errors). */
export const TRANSCRIPT_FAILURE_CODES = [
  'audio_too_long',
  'insufficient_balance',
  'audio_unreachable',
  'audio_invalid',
  'audio_too_large',
  'audio_mismatch',
  'engine_failed',
] as const;

export type TranscriptFailureCode = (typeof TRANSCRIPT_FAILURE_CODES)[number];
