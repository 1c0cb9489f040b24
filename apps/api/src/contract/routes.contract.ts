import { LIMITS } from '@hark/core';
import type { TObject } from '@sinclair/typebox';
import { type HeaderName, type Json, NO_STORE, RATE, validationKeys } from '../openapi/parts';
import { OPENAI_AUDIO_REQUEST, OPENAI_AUDIO_RESPONSES, OPENAI_TAG } from '../openapi/openai.paths';
import { SUBTITLE_CONTENT_TYPES, SubtitlesQuery } from '../schemas/subtitles.schemas';
import {
  CreateTranscriptBody,
  GetTranscriptQuery,
  ListTranscriptsQuery,
} from '../schemas/transcript.schemas';
import { UploadQuery } from '../schemas/upload.schemas';

/**
 * The route contract: every public route of the API declared once. Express mounts each from here
 * (`contract/mount.ts`: method, path, rate limiter), the rate-limit rules name routes by the key
 * derived here, and the OpenAPI document (`openapi/document.ts`) is built by walking this table
 * in order. Operator endpoints (`/metrics`, `/admin/queues`) and the try page are not part of it.
 */
export type Method = 'get' | 'post' | 'put' | 'delete';

/**
 * `key`: a bearer API key, limited per account. `address`: no key, limited per client address.
 * `none`: no key and no rate limit (health checks).
 */
export type AuthKind = 'key' | 'address' | 'none';

/** A successful (or otherwise documented, non-error) response. */
export interface RouteResponse {
  description: string;
  /** `{data: …}` JSON: a component schema name, or an inline schema. */
  data?: string | Json;
  /** Any other body, by media type (used when `data` is absent). */
  content?: Json;
  headers: readonly HeaderName[];
  /** Headers that may be present (optional variants of the components). */
  optionalHeaders?: readonly HeaderName[];
  /** OpenAPI links from this response's `data.id` to operations on the resource. */
  links?: readonly string[];
}

interface RouteBase {
  method: Method;
  /** The OpenAPI path, `{name}` for path parameters. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  auth: AuthKind;
  /** Description of the `{id}` path parameter. */
  pathId?: string;
  /** Header parameters, as OpenAPI parameter objects. */
  headerParameters?: readonly Json[];
  /** The schema the route validates its query with (one parameter per property). */
  query?: TObject;
  /** OpenAPI request body. */
  requestBody?: Json;
  /** Responses that are not errors, by status. */
  responses: Record<number, RouteResponse>;
  /**
   * Counted under another route's rate limit (its operationId) instead of its own: both ways of
   * creating a transcript share one limit.
   */
  limitAs?: string;
}

/** Errors in Hark's envelope (`{error: {code, …}}`). */
export interface HarkErrors {
  errorShape: 'hark';
  /** Error codes by status, besides 401 `invalid_api_key` (keyed routes), 408 `request_timeout`, 429 `rate_limited`, 431 `headers_too_large` and 500 `internal`. */
  errors?: Record<number, readonly string[]>;
  /** `fields` keys of 400 `validation`; by default those of the `query` schema's `x-error` annotations. */
  validation?: Record<string, readonly string[]>;
  /** Headers of every error response except 401 and 429 (default: request id and RateLimit-*). */
  errorHeaders?: readonly HeaderName[];
  /** Optional headers of error responses, by status (429 always has Retry-After). */
  optionalErrorHeaders?: Record<number, readonly HeaderName[]>;
}

/** Errors in OpenAI's shape, documented response by response. */
export interface OpenAiErrors {
  errorShape: 'openai';
  errorResponses: Record<number, Json>;
}

/** No error responses are documented (health checks). */
export interface NoErrors {
  errorShape: 'none';
}

export type RouteContract = RouteBase & (HarkErrors | OpenAiErrors | NoErrors);

const TRANSCRIPT_LINKS = [
  'getTranscript',
  'deleteTranscript',
  'cancelTranscript',
  'getTranscriptSubtitles',
  'listWebhookDeliveries',
  'replayWebhook',
];
const UPLOAD_LINKS = ['getUpload', 'appendUploadChunk'];

const createBody = { $ref: '#/components/schemas/CreateTranscriptRequest' };
const formEncoding = {
  glossary: { contentType: 'application/json' },
  metadata: { contentType: 'application/json' },
};
const octetStream = (required: boolean): Json => ({
  required,
  content: {
    'application/octet-stream': {
      schema: { type: 'string', contentMediaType: 'application/octet-stream' },
    },
  },
});

const TRANSCRIPT_ID = 'Transcript identifier.';
const UPLOAD_ID = 'Upload identifier.';

const OPENAI_AUDIO = {
  method: 'post',
  tag: OPENAI_TAG.name,
  auth: 'key',
  requestBody: OPENAI_AUDIO_REQUEST,
  responses: {
    200: {
      description:
        '`json` and `verbose_json` as JSON; `text`, `srt` and `vtt` as `text/plain` (as OpenAI answers them).',
      headers: RATE,
      content: {
        'application/json': {
          schema: {
            anyOf: [
              { $ref: '#/components/schemas/OpenAiTranscription' },
              { $ref: '#/components/schemas/OpenAiTranscriptionVerbose' },
            ],
          },
        },
        'text/plain': { schema: { type: 'string' } },
      },
    },
  },
  // Counted as creating a transcript: one rate limit for both ways of asking for one.
  limitAs: 'createTranscript',
  errorShape: 'openai',
  errorResponses: OPENAI_AUDIO_RESPONSES,
} as const;

/** Every route, in the order of the OpenAPI document's `paths`. */
export const ROUTES = [
  {
    method: 'post',
    path: '/v1/transcripts',
    operationId: 'createTranscript',
    summary: 'Create a transcript',
    description:
      'Starts transcribing audio from a public `url` or an `uploadId` (exactly one). Returns at once with status ' +
      '`processing`; credits are held until completion. Form bodies carry `glossary` and `metadata` as JSON ' +
      'strings (or bracket syntax), numbers and booleans as text.',
    tag: 'Transcripts',
    auth: 'key',
    headerParameters: [
      {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Same key and same body (same parsed fields, whatever the content type): the same transcript, created and ' +
          'charged once. Same key, different body: 409 `idempotency_conflict`. A replay of a transcript deleted or ' +
          'expired since: 404 `not_found` (nothing is created or charged). Kept 24 hours.',
        schema: {
          type: 'string',
          minLength: 1,
          maxLength: LIMITS.idempotencyKeyMaxChars,
          'x-error': 'idempotency_key_invalid',
        },
      },
    ],
    requestBody: {
      required: true,
      content: {
        'application/json': { schema: createBody },
        'application/x-www-form-urlencoded': { schema: createBody, encoding: formEncoding },
        'multipart/form-data': { schema: createBody, encoding: formEncoding },
      },
    },
    responses: {
      201: {
        description: 'Created; status `processing`.',
        data: 'Transcript',
        headers: RATE,
        links: TRANSCRIPT_LINKS,
      },
      200: {
        description:
          'The existing transcript: `reuseIfIdentical` matched, or an `Idempotency-Key` replay of a 200.',
        data: 'Transcript',
        headers: RATE,
      },
    },
    errorShape: 'hark',
    errors: {
      400: ['validation', 'upload_mismatch'],
      402: ['insufficient_balance'],
      404: ['upload_not_found', 'not_found'],
      409: ['idempotency_conflict'],
      413: ['payload_too_large'],
      429: ['concurrency_limit'],
    },
    validation: validationKeys([CreateTranscriptBody], {
      url: ['url_or_upload_id'],
      uploadId: ['upload_empty'],
      reuseIfIdentical: ['reuse_needs_sha256'],
      idempotencyKey: ['idempotency_key_invalid'],
      body: ['body_invalid', 'body_incomplete'],
    }),
  },
  {
    method: 'get',
    path: '/v1/transcripts',
    operationId: 'listTranscripts',
    summary: 'List transcripts',
    description:
      'Newest first, without `text`, `words`, `utterances` and `diarizationSegments`. Page with `page`/`perPage` ' +
      '(with `total`), or with `cursor` (never skips or repeats). `page` is 1 to 100000 (default 1), `perPage` 1 to ' +
      '100 (default 20); `since` is inclusive, `until` exclusive.',
    tag: 'Transcripts',
    auth: 'key',
    query: ListTranscriptsQuery,
    responses: { 200: { description: 'A page of transcripts.', data: 'TranscriptList', headers: RATE } },
    errorShape: 'hark',
    errors: { 400: ['validation'] },
  },
  {
    method: 'get',
    path: '/v1/transcripts/{id}',
    operationId: 'getTranscript',
    summary: 'Get a transcript',
    description:
      'With `wait` (1 to 60 seconds) the response is held while the transcript is processing and returns the ' +
      'moment it finishes; expiry of the wait returns it still `processing` (not an error).',
    tag: 'Transcripts',
    auth: 'key',
    pathId: TRANSCRIPT_ID,
    query: GetTranscriptQuery,
    responses: {
      200: {
        description:
          'The transcript. While `processing`, `Retry-After` says how long polling is worth waiting.',
        data: 'Transcript',
        headers: RATE,
        optionalHeaders: ['Retry-After'],
      },
    },
    errorShape: 'hark',
    errors: { 400: ['validation'], 404: ['not_found'] },
  },
  {
    method: 'delete',
    path: '/v1/transcripts/{id}',
    operationId: 'deleteTranscript',
    summary: 'Delete a transcript',
    description: 'Erases text, words and stored audio irrecoverably; the usage record stays.',
    tag: 'Transcripts',
    auth: 'key',
    pathId: TRANSCRIPT_ID,
    responses: { 200: { description: 'Deleted.', data: 'DeletedTranscript', headers: RATE } },
    errorShape: 'hark',
    errors: { 404: ['not_found'], 409: ['transcript_processing'] },
  },
  {
    method: 'post',
    path: '/v1/transcripts/{id}/cancel',
    operationId: 'cancelTranscript',
    summary: 'Cancel a processing transcript',
    description: 'Stops it at once and releases its hold; nothing is charged. No request body.',
    tag: 'Transcripts',
    auth: 'key',
    pathId: TRANSCRIPT_ID,
    responses: {
      200: { description: 'The transcript, status `canceled`.', data: 'Transcript', headers: RATE },
    },
    errorShape: 'hark',
    errors: { 404: ['not_found'], 409: ['transcript_finished'] },
  },
  {
    method: 'get',
    path: '/v1/transcripts/{id}/subtitles',
    operationId: 'getTranscriptSubtitles',
    summary: 'Export a finished transcript as subtitles or text',
    description:
      'SubRip (`srt`), WebVTT (`vtt`) or plain text (`txt`), cut into cues by line length, lines per cue and cue ' +
      'duration; speaker labels when the transcript was diarized.',
    tag: 'Transcripts',
    auth: 'key',
    pathId: TRANSCRIPT_ID,
    query: SubtitlesQuery,
    responses: {
      200: {
        description: 'The document in the media type of `format`, with `charset=utf-8`.',
        headers: [...RATE, 'Content-Disposition'],
        content: Object.fromEntries(
          Object.values(SUBTITLE_CONTENT_TYPES).map((type) => [type, { schema: { type: 'string' } }]),
        ),
      },
    },
    errorShape: 'hark',
    errors: {
      400: ['validation'],
      404: ['not_found'],
      409: ['transcript_processing', 'transcript_not_done'],
    },
    optionalErrorHeaders: { 409: ['Retry-After'] },
  },
  {
    method: 'get',
    path: '/v1/transcripts/{id}/webhook-deliveries',
    operationId: 'listWebhookDeliveries',
    summary: 'Webhook delivery history',
    description: 'Every attempt, automatic and manual, oldest first.',
    tag: 'Webhooks',
    auth: 'key',
    pathId: TRANSCRIPT_ID,
    responses: {
      200: {
        description: 'Delivery records, oldest first.',
        data: { type: 'array', items: { $ref: '#/components/schemas/WebhookDelivery' } },
        headers: RATE,
      },
    },
    errorShape: 'hark',
    errors: { 404: ['not_found'] },
  },
  {
    method: 'post',
    path: '/v1/transcripts/{id}/webhook-deliveries',
    operationId: 'replayWebhook',
    summary: 'Replay the completion notice',
    description:
      'Sends the notice again at once, while the request waits (a manual attempt: it continues the attempt count and ' +
      'is never retried automatically). No request body.',
    tag: 'Webhooks',
    auth: 'key',
    pathId: TRANSCRIPT_ID,
    responses: {
      201: {
        description: 'The delivery record of the attempt just made.',
        data: 'WebhookDelivery',
        headers: RATE,
      },
    },
    errorShape: 'hark',
    errors: { 404: ['not_found'], 409: ['no_webhook'] },
  },
  {
    method: 'post',
    path: '/v1/uploads',
    operationId: 'createUpload',
    summary: 'Upload a file (or create an empty upload)',
    description:
      'The raw body is the file (up to 100 MB in one request); no body creates an empty upload to fill with PUT.',
    tag: 'Uploads',
    auth: 'key',
    query: UploadQuery,
    headerParameters: [
      {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          'Same key, same `expectedBytes`, `sha256` and body bytes: the same upload, created once, answered as it ' +
          'stands now (the body is read, not stored again). Same key, another request: 409 `idempotency_conflict`. ' +
          'A create under the key still running is waited for (up to 10 s, then 409 `upload_busy`, retryable). ' +
          'Kept 24 hours, apart from the keys of POST /v1/transcripts.',
        schema: {
          type: 'string',
          minLength: 1,
          maxLength: LIMITS.idempotencyKeyMaxChars,
          'x-error': 'idempotency_key_invalid',
        },
      },
    ],
    requestBody: octetStream(false),
    responses: {
      201: {
        description: 'Created; or, for an `Idempotency-Key` replay, the recorded upload as it stands now.',
        data: 'Upload',
        headers: NO_STORE,
        links: UPLOAD_LINKS,
      },
    },
    errorShape: 'hark',
    errors: {
      400: ['validation'],
      402: ['insufficient_balance'],
      404: ['upload_not_found'],
      409: ['idempotency_conflict', 'upload_busy'],
      413: ['payload_too_large', 'upload_quota_exceeded'],
      503: ['unavailable'],
    },
    validation: validationKeys([UploadQuery], { idempotencyKey: ['idempotency_key_invalid'] }),
    errorHeaders: NO_STORE,
  },
  {
    method: 'get',
    path: '/v1/uploads/{id}',
    operationId: 'getUpload',
    summary: 'Get an upload',
    description:
      "`receivedBytes` is where to resume an interrupted upload. While a chunk is being written the answer waits for it (up to 10 s; then 409 `upload_busy`, retryable), so that a client that lost a chunk's response never resumes before it.",
    tag: 'Uploads',
    auth: 'key',
    pathId: UPLOAD_ID,
    responses: { 200: { description: 'The upload.', data: 'Upload', headers: NO_STORE } },
    errorShape: 'hark',
    errors: { 404: ['upload_not_found'], 409: ['upload_busy'] },
    errorHeaders: NO_STORE,
  },
  {
    method: 'put',
    path: '/v1/uploads/{id}',
    operationId: 'appendUploadChunk',
    summary: 'Append a chunk',
    description: 'Raw bytes (up to 16 MiB) appended to the end of the file; chunks in order, one at a time.',
    tag: 'Uploads',
    auth: 'key',
    pathId: UPLOAD_ID,
    requestBody: octetStream(true),
    responses: {
      200: {
        description: 'The upload, with the accumulated `receivedBytes`.',
        data: 'Upload',
        headers: NO_STORE,
      },
    },
    errorShape: 'hark',
    errors: {
      400: ['chunk_empty'],
      402: ['insufficient_balance'],
      404: ['upload_not_found'],
      409: ['upload_busy'],
      413: ['chunk_too_large', 'upload_too_large', 'upload_quota_exceeded'],
      503: ['unavailable'],
    },
    errorHeaders: NO_STORE,
  },
  {
    method: 'get',
    path: '/v1/balance',
    operationId: 'getBalance',
    summary: 'Read the balance',
    tag: 'Account',
    auth: 'key',
    responses: { 200: { description: 'The balance.', data: 'Balance', headers: RATE } },
    errorShape: 'hark',
  },
  {
    method: 'get',
    path: '/v1/limits',
    operationId: 'getLimits',
    summary: 'Read the limits',
    tag: 'Account',
    auth: 'key',
    responses: {
      200: { description: 'The limits that apply to this account.', data: 'Limits', headers: RATE },
    },
    errorShape: 'hark',
  },
  {
    method: 'get',
    path: '/v1/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This document',
    description: 'No key needed; limited per client address.',
    tag: 'Meta',
    auth: 'address',
    responses: {
      200: {
        description: 'The OpenAPI document.',
        headers: RATE,
        content: {
          'application/json': { schema: { type: 'object', required: ['openapi', 'info', 'paths'] } },
        },
      },
    },
    errorShape: 'hark',
  },
  {
    method: 'get',
    path: '/healthz',
    operationId: 'healthz',
    summary: 'Liveness',
    tag: 'Meta',
    auth: 'none',
    responses: { 200: { description: 'The process is up.', data: 'Health', headers: ['X-Request-Id'] } },
    errorShape: 'none',
  },
  {
    method: 'get',
    path: '/readyz',
    operationId: 'readyz',
    summary: 'Readiness (Postgres and Redis reachable)',
    tag: 'Meta',
    auth: 'none',
    responses: {
      200: { description: 'Ready.', data: 'Readiness', headers: ['X-Request-Id'] },
      503: {
        description: 'Postgres or Redis unreachable, or shutting down.',
        data: 'Readiness',
        headers: ['X-Request-Id'],
      },
    },
    errorShape: 'none',
  },
  {
    ...OPENAI_AUDIO,
    path: '/v1/audio/transcriptions',
    operationId: 'createOpenAiTranscription',
    summary: 'Transcribe audio (OpenAI-compatible)',
    description:
      "OpenAI's `POST /audio/transcriptions`: the request waits for the transcript and answers in " +
      '`response_format`.',
  },
  {
    ...OPENAI_AUDIO,
    path: '/v1/audio/translations',
    operationId: 'createOpenAiTranslation',
    summary: 'Translate audio into English (OpenAI-compatible)',
    description:
      "OpenAI's `POST /audio/translations` (whisper.cpp `--translate`): English text from speech in any " +
      'language; `language` (an extension here) names the spoken one.',
  },
] as const satisfies readonly RouteContract[];

export type ApiRoute = (typeof ROUTES)[number];
export type OperationId = ApiRoute['operationId'];

/** The rate-limit key of a route: `POST /v1/transcripts`, `GET /v1/transcripts/{id}`. */
export type RouteKeyOf<R extends { method: Method; path: string }> = `${Uppercase<R['method']>} ${R['path']}`;

/** Routes limited under their own key (keyed or public by address; not those counted as another). */
type OwnLimitRoute = Exclude<ApiRoute, { auth: 'none' } | { limitAs: string }>;

/** A key the rate-limit rules may name: a limited route's method and OpenAPI path. */
export type RouteKey = OwnLimitRoute extends infer R
  ? R extends { method: Method; path: string }
    ? RouteKeyOf<R>
    : never
  : never;

/** Routes by operationId. */
export const ROUTE: { readonly [K in OperationId]: Extract<ApiRoute, { operationId: K }> } =
  Object.fromEntries(ROUTES.map((r) => [r.operationId, r])) as never;

/** The route's own key (method and path), whatever it is counted under. */
export function routeKeyOf(route: { method: Method; path: string }): string {
  return `${route.method.toUpperCase()} ${route.path}`;
}

/** The key the route's requests are counted under (null: not rate-limited). */
export function rateLimitKey(route: RouteContract): RouteKey | null {
  if (route.auth === 'none') return null;
  const counted = route.limitAs === undefined ? route : ROUTE[route.limitAs as OperationId];
  return routeKeyOf(counted) as RouteKey;
}

/** Every key the rate-limit rules may name. */
export const ROUTE_KEYS: ReadonlySet<string> = new Set(
  ROUTES.map((r) => rateLimitKey(r)).filter((k) => k !== null),
);

/** `/v1/transcripts/{id}` → `/transcripts/:id` under a router mounted at `base` (`/v1`, or `` for the app). */
export function expressPath(path: string, base = ''): string {
  if (!path.startsWith(`${base}/`)) throw new Error(`route ${path} is not under ${base || '/'}`);
  return path.slice(base.length).replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}
