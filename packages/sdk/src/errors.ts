import type { ErrorCode } from './generated/api-types';
import type { Transcript } from './types';

/**
 * Codes of the API's error envelope (`error.code`, generated from docs/openapi.json with each code's
 * status and meaning), and the SDK's own two; other strings may appear in later versions.
 */
export type ApiErrorCode =
  | ErrorCode
  /** An answer without the envelope (a proxy's error page, say). */
  | 'http_error'
  /** A 2xx answer whose body was not the expected JSON. */
  | 'invalid_response'
  | (string & {});

/** Base class of every error the SDK throws on purpose. */
export class HarkError extends Error {
  override name = 'HarkError';
}

export interface HarkApiErrorInit {
  code: ApiErrorCode;
  message: string;
  status: number;
  retryable: boolean;
  requestId: string | null;
  fields?: Record<string, string>;
  /** Seconds from the `Retry-After` header, when present. */
  retryAfterSeconds?: number | null;
  attempts?: number;
}

/** The service answered with an error (the `{error: {...}}` envelope). Branch on `code`. */
export class HarkApiError extends HarkError {
  override name = 'HarkApiError';
  readonly code: ApiErrorCode;
  /** HTTP status. */
  readonly status: number;
  /** Whether repeating the same request can succeed (from the envelope). */
  readonly retryable: boolean;
  /** The response's id (`X-Request-Id`); quote it when reporting a problem. */
  readonly requestId: string | null;
  /** Only for `validation`: one stable message key per invalid field. */
  readonly fields: Record<string, string> | undefined;
  readonly retryAfterSeconds: number | null;
  /** Requests made before giving up (1 when not retried). */
  readonly attempts: number;

  constructor(init: HarkApiErrorInit) {
    super(init.message);
    this.code = init.code;
    this.status = init.status;
    this.retryable = init.retryable;
    this.requestId = init.requestId;
    this.fields = init.fields;
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
    this.attempts = init.attempts ?? 1;
  }
}

/** No answer: connection refused or reset, DNS failure, or the request timed out. */
export class HarkNetworkError extends HarkError {
  override name = 'HarkNetworkError';
  /** Always true: a network failure is worth retrying. */
  readonly retryable = true;

  constructor(
    message: string,
    /** True when the SDK's own per-request time-out fired. */
    readonly timedOut: boolean,
    /** Requests made before giving up. */
    readonly attempts: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** `waitForTranscript` ran out of time; `transcript` is the last state seen (still processing). */
export class HarkTimeoutError extends HarkError {
  override name = 'HarkTimeoutError';

  constructor(
    message: string,
    readonly transcript: Transcript,
  ) {
    super(message);
  }
}

/** A resumable upload cannot go on (the source ended early, or the upload moved unexpectedly). */
export class HarkUploadError extends HarkError {
  override name = 'HarkUploadError';

  constructor(
    message: string,
    readonly uploadId: string | null,
    readonly receivedBytes: number,
  ) {
    super(message);
  }
}

/** True when `err` is a {@link HarkApiError}, with `code` when given. */
export function isHarkApiError(err: unknown, code?: ApiErrorCode): err is HarkApiError {
  return err instanceof HarkApiError && (code === undefined || err.code === code);
}
