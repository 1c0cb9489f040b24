// Generated from docs/openapi.json by packages/sdk/scripts/generate-types.ts: do not edit, run
// `pnpm openapi` (it writes the document and this file).

export type TranscriptStatus = 'processing' | 'done' | 'failed' | 'canceled';

/** `error.code` of a `failed` transcript. */
export type TranscriptFailureCode =
  | 'audio_too_long'
  | 'insufficient_balance'
  | 'audio_unreachable'
  | 'audio_invalid'
  | 'audio_too_large'
  | 'audio_mismatch'
  | 'engine_failed';

/** Kind of error; branch on it. */
export type ErrorCode =
  /** 400: invalid body or parameters; see `fields`. */
  | 'validation'
  /** 400: chunk with no content. */
  | 'chunk_empty'
  /** 400: received bytes differ from the declared `expectedBytes`. */
  | 'upload_mismatch'
  /** 401: missing or invalid key. */
  | 'invalid_api_key'
  /** 402: no credits left. */
  | 'insufficient_balance'
  /** 404: unknown transcript (or route), or one of another account, deleted or expired. */
  | 'not_found'
  /** 404: unknown upload or one of another account. */
  | 'upload_not_found'
  /** 409: another chunk of the upload is still being written (retryable), or a transcript already uses the upload (not retryable: send the rest as a new upload). */
  | 'upload_busy'
  /** 409: `Idempotency-Key` reused with a different body. */
  | 'idempotency_conflict'
  /** 409: the transcript is still processing. */
  | 'transcript_processing'
  /** 409: transcript already finished, cannot be canceled. */
  | 'transcript_finished'
  /** 409: the transcript ended without content (failed or canceled). */
  | 'transcript_not_done'
  /** 409: no `webhookUrl`, or not finished, so nothing to replay. */
  | 'no_webhook'
  /** 413: chunk over 16 MiB. */
  | 'chunk_too_large'
  /** 413: the upload would pass 2 GiB. */
  | 'upload_too_large'
  /** 413: the account's uploads not yet used by a transcript would pass its storage quota (`upload.quotaBytes` in the limits). */
  | 'upload_quota_exceeded'
  /** 413: request body over the size accepted by this route. */
  | 'payload_too_large'
  /** 431: request header fields over the size the server reads (16 KiB in all); answered before routing. */
  | 'headers_too_large'
  /** 408: the request was not received in full within the server's time-outs; answered before routing, retryable. */
  | 'request_timeout'
  /** 429: rate limit hit; see `Retry-After`. */
  | 'rate_limited'
  /** 429: account without a top-up already running 2 transcriptions. */
  | 'concurrency_limit'
  /** 500: service fault; retry with backoff. */
  | 'internal'
  /** 503: the upload store is temporarily unavailable (S3 driver); nothing was recorded; retry with backoff. */
  | 'unavailable';

export interface RateLimitRule {
  /** Method and path, e.g. `POST /v1/transcripts`. */
  endpoint: string;
  max: number;
  windowSeconds: number;
}

export interface Transcript extends TranscriptListItem {
  /** Null until status is `done`. */
  text: string | null;
  /** Every word; null until `done`. */
  words: Word[] | null;
  /** Blocks of continuous speech by one speaker; null until `done`. */
  utterances: Utterance[] | null;
  /** Speaker timeline before words were labeled; null when speakers were not requested. */
  diarizationSegments: DiarizationSegment[] | null;
}

/** A transcript without `text`, `words`, `utterances` and `diarizationSegments`; also the webhook body. */
export interface TranscriptListItem {
  /** Transcript identifier. */
  id: string;
  status: TranscriptStatus;
  /** Set only when status is `failed`; null otherwise (also for `canceled`). */
  error: TranscriptFailure | null;
  /** Detected or requested language; null while processing. */
  language: string | null;
  /** Real audio duration measured on completion; 0 while processing. */
  durationSeconds: number;
  /** Distinct speakers found; null when `speakers` was not requested (0 means asked and none found). */
  speakerCount: number | null;
  /** Charged, in US cents (fractional); 0 while processing and on failed. */
  cost: number;
  currency: 'USD';
  /** Model that produced the transcript, e.g. `whisper-base`. */
  model: string;
  /** The audio URL sent; null when the audio came from an upload. */
  url: string | null;
  /** Days the content is kept from creation; null follows the account default. */
  retentionDays: number | null;
  /** Caller's own id, returned exactly as sent. */
  externalId: string | null;
  /** Pairs sent with the request, unchanged. */
  metadata: Record<string, string> | null;
  /** ISO 8601 date and time. */
  createdAt: string;
}

export interface TranscriptList {
  /** Newest first. */
  transcripts: TranscriptListItem[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
  /** Total matching the filter; null when paging by `cursor`. */
  total: number | null;
  /** 1-based page number; null when paging by `cursor`. */
  page: number | null;
  perPage: number;
}

/** Set only when status is `failed`. */
export interface TranscriptFailure {
  code: TranscriptFailureCode;
  message: string;
}

export interface Word {
  /** Seconds from the start of the audio. */
  start: number;
  /** Seconds from the start of the audio. */
  end: number;
  text: string;
  /** Speaker label (A, B, ...); null when speakers were not requested. */
  speaker: string | null;
}

export interface Utterance {
  /** Seconds from the start of the audio. */
  start: number;
  /** Seconds from the start of the audio. */
  end: number;
  text: string;
  /** Null when speakers were not requested. */
  speaker: string | null;
  /** True when another speaker talked during part of the block. */
  overlap: boolean;
}

export interface DiarizationSegment {
  /** Seconds from the start of the audio. */
  start: number;
  /** Seconds from the start of the audio. */
  end: number;
  /** More than one name means overlapping speech. */
  speakers: string[];
}

export interface DeletedTranscript {
  id: string;
  deleted: true;
}

export interface Upload {
  /** Upload identifier (at most 36 characters). */
  id: string;
  /** Bytes durably stored so far: where to resume. */
  receivedBytes: number;
  /** Declared size; null if not declared. */
  expectedBytes: number | null;
  /** Declared digest (lowercase hex); null if not declared. */
  sha256: string | null;
  /** ISO 8601 date and time. */
  createdAt: string;
}

export interface Balance {
  currency: 'USD';
  /** Credits on the account, US cents (fractional). */
  total: number;
  /** Held by running transcriptions. */
  reserved: number;
  /** total - reserved; at 0 new transcriptions get 402. */
  available: number;
}

export interface Limits {
  audio: {
    maxDurationSeconds: number;
    /** Container formats the decoder accepts. */
    formats: string[];
  };
  upload: {
    /** Largest file across all chunks. */
    maxBytes: number;
    /** Largest single chunk body. */
    maxChunkBytes: number;
    /** Largest body in one request. */
    maxRequestBytes: number;
    /** Bytes this account may hold in uploads no transcript has used yet (a declared `expectedBytes` counts in full from creation); past it, POST and PUT are refused with 413 `upload_quota_exceeded`. While `available` is 0 this is the smaller no-credit allowance, past which they are refused with 402 `insufficient_balance`. */
    quotaBytes: number;
  };
  glossary: {
    maxEntries: number;
    maxTermChars: number;
  };
  concurrency: {
    /** Null means no limit (after the first top-up). */
    maxRunning: number | null;
  };
  rateLimits: RateLimitRule[];
  idempotencyKeyMaxChars: number;
}

export interface WebhookDelivery {
  /** Delivery id. */
  id: string;
  transcriptId: string;
  /** Where it was sent, as given in `webhookUrl`. */
  url: string;
  /** 1 on the first try; a replay continues the count. */
  attempt: number;
  /** True only for a 2xx answer. */
  delivered: boolean;
  /** The endpoint's answer; null when there was none. */
  statusCode: number | null;
  /** What stopped the request on the service side; null when the endpoint answered. One of `timeout`, `dns_failed`, `blocked_address` (the host resolves to an address that is not public), `connection_refused`, `connection_reset`, `tls_failed`, `too_many_redirects`, `request_failed`, or `interrupted`: the service stopped during this automatic attempt (the endpoint may have received it) and did not make it again, since a later attempt was acknowledged. */
  error: string | null;
  /** Start of the response body (at most 512 characters), credential-like content removed. */
  responsePreview: string | null;
  durationMs: number | null;
  /** True when the attempt was requested by the caller. */
  manual: boolean;
  /** ISO 8601 date and time. */
  createdAt: string;
}

export interface ErrorEnvelope {
  error: {
    /** Kind of error; branch on it. */
    code: ErrorCode;
    /** Plain-English explanation. */
    message: string;
    /** Whether repeating the same request can succeed. */
    retryable: boolean;
    /** Also in the `X-Request-Id` header. */
    requestId: string;
    /** Only for `validation`: one stable key per invalid field (see each field's `x-error`). */
    fields?: Record<string, string>;
  };
}
