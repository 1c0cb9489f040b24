import { type ErrorCode, isHarkError } from '@hark/core';

/**
 * Errors of the OpenAI-compatible routes, in OpenAI's shape `{error: {message, type, param,
 * code}}` and with the statuses the official clients map to their exception classes (400
 * BadRequestError, 401 AuthenticationError, 429 RateLimitError, 5xx InternalServerError).
 * Every other route keeps Hark's envelope.
 */
export type OpenAiErrorType =
  | 'invalid_request_error'
  | 'insufficient_quota'
  | 'requests'
  | 'server_error'
  | 'timeout_error';

export interface OpenAiErrorBody {
  error: { message: string; type: OpenAiErrorType; param: string | null; code: string | null };
}

export class OpenAiError extends Error {
  override readonly name = 'OpenAiError';

  constructor(
    readonly status: number,
    message: string,
    readonly type: OpenAiErrorType,
    readonly param: string | null = null,
    readonly code: string | null = null,
    /** Extra response headers (Retry-After; `x-should-retry: false` where a retry cannot help). */
    readonly headers: Record<string, string> = {},
    /** The error it stands for (logged with it). */
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
  }

  static invalid(message: string, param: string | null, code: string | null = null): OpenAiError {
    return new OpenAiError(400, message, 'invalid_request_error', param, code);
  }

  body(): OpenAiErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/**
 * The official clients retry 408, 409, 429 and 5xx unless told not to; a retry of these
 * routes creates (and charges) another transcript, so refusals that a retry cannot cure say so.
 */
const NO_RETRY = { 'x-should-retry': 'false' } as const;

/** Hark's `fields` names, as OpenAI's form parameters. */
const PARAM: Record<string, string> = {
  uploadId: 'file',
  glossary: 'glossary',
  speakers: 'speakers',
  language: 'language',
};

const FROM_HARK: Partial<Record<ErrorCode, (headers: Record<string, string>) => OpenAiError>> = {
  invalid_api_key: () =>
    new OpenAiError(
      401,
      'Incorrect API key provided. Send a Hark key as `Authorization: Bearer tk_...`.',
      'invalid_request_error',
      null,
      'invalid_api_key',
    ),
  // OpenAI answers an exhausted quota with 429 `insufficient_quota`: the clients raise
  // RateLimitError with that code, and x-should-retry stops their automatic retries.
  insufficient_balance: () =>
    new OpenAiError(
      429,
      'You exceeded your current quota: the account has no credits available. Top up the account and try again.',
      'insufficient_quota',
      null,
      'insufficient_quota',
      NO_RETRY,
    ),
  rate_limited: (h) =>
    new OpenAiError(
      429,
      'Rate limit reached for requests; retry after the time in Retry-After.',
      'requests',
      null,
      'rate_limit_exceeded',
      h,
    ),
  concurrency_limit: () =>
    new OpenAiError(
      429,
      'The account already has the maximum number of transcriptions running (2 until the first top-up); retry when one finishes.',
      'requests',
      null,
      'concurrency_limit_exceeded',
    ),
  payload_too_large: () =>
    new OpenAiError(
      413,
      'The request body is too large.',
      'invalid_request_error',
      'file',
      'file_too_large',
      NO_RETRY,
    ),
  unavailable: () =>
    new OpenAiError(
      503,
      'The service is temporarily unavailable; retry later.',
      'server_error',
      null,
      'service_unavailable',
    ),
};

/** Anything thrown on these routes, in OpenAI's shape; unknown errors become 500 `server_error`. */
export function toOpenAiError(err: unknown): OpenAiError {
  if (err instanceof OpenAiError) return err;
  if (isHarkError(err)) {
    const mapped = FROM_HARK[err.code]?.(err.headers ?? {});
    if (mapped) return mapped;
    if (err.status === 400) {
      const [field, key] = Object.entries(err.fields ?? {})[0] ?? [null, null];
      const param = field === null ? null : (PARAM[field] ?? field);
      const message =
        key === 'upload_empty'
          ? 'The file is empty.'
          : field
            ? `Invalid value for '${param}' (${key}).`
            : err.message;
      return OpenAiError.invalid(message, param, key ?? err.code);
    }
    // Any other refusal (a code added later, say): its status and message, OpenAI's types.
    if (err.status < 500) {
      const type =
        err.status === 429 ? 'requests' : err.status === 402 ? 'insufficient_quota' : 'invalid_request_error';
      // 402 is no class of the clients': as OpenAI, a payment refusal is a 429.
      const status = err.status === 402 ? 429 : err.status;
      return new OpenAiError(status, err.message, type, null, err.code, {
        ...(err.headers ?? {}),
        ...(err.retryable ? {} : NO_RETRY),
      });
    }
  }
  return new OpenAiError(
    500,
    'The server had an error while processing your request; retry later.',
    'server_error',
    null,
    'internal',
  );
}

/**
 * An error after the transcript was created (while waiting for it, reading it): the transcript
 * goes on, so an unexpected one is a 500 naming it that the clients do not retry, since a retry
 * would create (and charge) a second transcript. Refusals keep their own status.
 */
export function afterTranscriptCreated(err: unknown, transcriptId: string): OpenAiError {
  const e = toOpenAiError(err);
  if (e.status < 500 || e.headers['x-should-retry'] !== undefined) return e;
  return new OpenAiError(
    e.status,
    `The server had an error while processing your request. The transcription continues as ` +
      `transcript ${transcriptId}: fetch it with GET /v1/transcripts/${transcriptId}.`,
    e.type,
    e.param,
    e.code,
    { ...e.headers, ...NO_RETRY },
    err,
  );
}

/** The transcript was canceled (POST /v1/transcripts/{id}/cancel) while this request waited. */
export function transcriptCanceled(transcriptId: string): OpenAiError {
  return new OpenAiError(
    409,
    `The transcription was canceled (transcript ${transcriptId}).`,
    'invalid_request_error',
    null,
    'transcription_canceled',
    NO_RETRY,
  );
}

/** The wait bound passed: the transcript goes on and can be fetched later. */
export function transcriptTimedOut(
  transcriptId: string,
  waitSeconds: number,
  restarting = false,
): OpenAiError {
  const why = restarting
    ? 'This API instance is restarting.'
    : `The transcription is still running after ${waitSeconds} seconds.`;
  return new OpenAiError(
    504,
    `${why} It continues as transcript ${transcriptId}: ` +
      `fetch it with GET /v1/transcripts/${transcriptId} (add ?wait=60 to wait for it).`,
    'timeout_error',
    null,
    'transcription_timeout',
    { ...NO_RETRY, Location: `/v1/transcripts/${transcriptId}` },
  );
}

/** A transcript that ended `failed`: its failure code, as the error this request answers with. */
export function transcriptFailure(
  code: string | null,
  message: string | null,
  transcriptId: string,
): OpenAiError {
  const where = ` (transcript ${transcriptId})`;
  switch (code) {
    case 'audio_invalid':
      return OpenAiError.invalid(
        `The audio file could not be decoded or its format is not supported${where}.`,
        'file',
        'invalid_file_format',
      );
    case 'audio_too_long':
      return OpenAiError.invalid(`${message ?? 'The audio is too long.'}${where}`, 'file', 'audio_too_long');
    case 'audio_mismatch':
      return OpenAiError.invalid(`${message ?? 'The stored audio does not match.'}${where}`, 'file', code);
    case 'insufficient_balance':
      return new OpenAiError(
        429,
        `You exceeded your current quota: the audio is longer than the remaining credits cover${where}. Top up the account and try again.`,
        'insufficient_quota',
        null,
        'insufficient_quota',
        NO_RETRY,
      );
    default:
      // The worker already retried; a client retry would only transcribe (and hold credits) again.
      return new OpenAiError(
        500,
        `The transcription failed${where}: ${message ?? 'engine failure'}`,
        'server_error',
        null,
        code ?? 'engine_failed',
        NO_RETRY,
      );
  }
}

/**
 * The account already has its most requests on these routes (HARK_OPENAI_WAITING_PER_ACCOUNT):
 * a RateLimitError the clients retry with backoff; one place frees as soon as one is answered.
 */
export function tooManyWaiting(perAccount: number): OpenAiError {
  return new OpenAiError(
    429,
    `The account already has ${perAccount} requests waiting on /v1/audio (the most at once); retry when one ` +
      'is answered, or create transcripts with POST /v1/transcripts and a webhook.',
    'requests',
    null,
    'too_many_waiting_requests',
  );
}
