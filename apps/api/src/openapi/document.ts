import { LIMITS } from '@hark/core';
import { RESPONSE_COMPONENTS } from '../schemas/response.schemas';
import { SUBTITLE_CONTENT_TYPES, SubtitlesQuery } from '../schemas/subtitles.schemas';
import {
  CreateTranscriptBody,
  GetTranscriptQuery,
  ListTranscriptsQuery,
} from '../schemas/transcript.schemas';
import { UploadQuery } from '../schemas/upload.schemas';
import { OPENAI_PATHS, OPENAI_SCHEMAS, OPENAI_TAG } from './openai.paths';
import {
  HEADERS,
  type HeaderName,
  type Json,
  dataResponse,
  errorResponse,
  headerRefs,
  pathId,
  plain,
  queryParameters,
  validationKeys,
} from './parts';

/**
 * The OpenAPI 3.1 document, built from the schemas the API validates requests with and the
 * response schemas in `schemas/response.schemas.ts`. Served at GET /v1/openapi.json and written
 * to docs/openapi.json by `pnpm openapi`; a unit test fails when the committed copy is stale.
 */
export const API_VERSION = '1.0.0';

/** Headers of a completion notice, as packages/webhooks sends them (checked by document.spec.ts). */
export const WEBHOOK_HEADERS = {
  signature: 'Hark-Signature',
  deliveryId: 'Hark-Delivery-Id',
  userAgent: 'Hark-Webhooks/1',
} as const;

const RATE: HeaderName[] = ['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];
const NO_STORE: HeaderName[] = [...RATE, 'Cache-Control'];

/** Error responses most operations share, under `components.responses`. */
const SHARED_ERRORS: Record<number, { name: string; codes: string[] }> = {
  401: { name: 'Unauthorized', codes: ['invalid_api_key'] },
  429: { name: 'RateLimited', codes: ['rate_limited'] },
  431: { name: 'HeadersTooLarge', codes: ['headers_too_large'] },
  500: { name: 'InternalError', codes: ['internal'] },
};

/** Answered by the HTTP server before any route (no limiter ran): only the request id. */
const BEFORE_ROUTING = new Set([431]);

/** A fault can happen before the limiter (or in it): only the request id is certain on a 500. */
function faultHeaders(own: readonly HeaderName[]): Json {
  return headerRefs(
    ['X-Request-Id'],
    own.filter((h) => h !== 'X-Request-Id'),
  );
}

function sharedResponses(): Json {
  return Object.fromEntries(
    Object.entries(SHARED_ERRORS).map(([status, { name, codes }]) => [
      name,
      errorResponse(
        codes,
        status === '500'
          ? faultHeaders(RATE)
          : BEFORE_ROUTING.has(Number(status))
            ? headerRefs(['X-Request-Id'])
            : headerRefs(RATE, status === '429' ? ['Retry-After'] : []),
      ),
    ]),
  );
}

interface Operation {
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  parameters?: Json[];
  requestBody?: Json;
  /** Successful responses, by status. */
  ok: Record<number, Json>;
  /** Error codes by status, besides 401 `invalid_api_key`, 429 `rate_limited`, 431 `headers_too_large` and 500 `internal`. */
  errors?: Record<number, string[]>;
  /** `fields` keys of 400 `validation`. */
  validation?: Record<string, string[]>;
  /** Headers of every error response (Cache-Control on uploads, except 401 and 429). */
  errorHeaders?: HeaderName[];
  /** Optional headers of error responses, by status (429 always has Retry-After). */
  optionalErrorHeaders?: Record<number, HeaderName[]>;
  /** Public: no bearer key and no 401. */
  public?: boolean;
}

function operation(op: Operation): Json {
  const errors: Record<number, string[]> = { ...op.errors };
  if (!op.public) (errors[401] ??= []).unshift('invalid_api_key');
  (errors[429] ??= []).unshift('rate_limited');
  (errors[431] ??= []).push('headers_too_large');
  (errors[500] ??= []).push('internal');
  const responses: Json = {};
  for (const [status, body] of Object.entries(op.ok)) responses[status] = body;
  for (const [status, codes] of Object.entries(errors)) {
    const s = Number(status);
    const own = s === 401 || s === 429 ? RATE : (op.errorHeaders ?? RATE);
    const shared = SHARED_ERRORS[s];
    if (
      shared &&
      (own === RATE || s === 500 || BEFORE_ROUTING.has(s)) &&
      codes.join() === shared.codes.join()
    ) {
      responses[status] = { $ref: `#/components/responses/${shared.name}` };
      continue;
    }
    const headers =
      s === 500
        ? faultHeaders(own)
        : headerRefs(own, s === 429 ? ['Retry-After'] : (op.optionalErrorHeaders?.[s] ?? []));
    responses[status] = errorResponse(
      codes,
      headers,
      codes.includes('validation') ? op.validation : undefined,
    );
  }
  return {
    operationId: op.operationId,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [op.tag],
    ...(op.public ? { security: [] } : {}),
    ...(op.parameters ? { parameters: op.parameters } : {}),
    ...(op.requestBody ? { requestBody: op.requestBody } : {}),
    responses,
  };
}

/** OpenAPI links: the id a create returns feeds the operations on that resource. */
function links(operationIds: readonly string[]): Json {
  return Object.fromEntries(
    operationIds.map((operationId) => [
      operationId,
      { operationId, parameters: { id: '$response.body#/data/id' } },
    ]),
  );
}

const TRANSCRIPT_LINKS = links([
  'getTranscript',
  'deleteTranscript',
  'cancelTranscript',
  'getTranscriptSubtitles',
  'listWebhookDeliveries',
  'replayWebhook',
]);
const UPLOAD_LINKS = links(['getUpload', 'appendUploadChunk']);

const transcriptId = pathId('Transcript identifier.');
const uploadId = pathId('Upload identifier.');
const json = (schema: string) => ({ schema: { $ref: `#/components/schemas/${schema}` } });

const createBody = { $ref: '#/components/schemas/CreateTranscriptRequest' };
const formEncoding = {
  glossary: { contentType: 'application/json' },
  metadata: { contentType: 'application/json' },
};

const paths: Json = {
  '/v1/transcripts': {
    post: operation({
      operationId: 'createTranscript',
      summary: 'Create a transcript',
      description:
        'Starts transcribing audio from a public `url` or an `uploadId` (exactly one). Returns at once with status ' +
        '`processing`; credits are held until completion. Form bodies carry `glossary` and `metadata` as JSON ' +
        'strings (or bracket syntax), numbers and booleans as text.',
      tag: 'Transcripts',
      parameters: [
        {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description:
            'Same key and same body (same parsed fields, whatever the content type): the same transcript, created and ' +
            'charged once. Same key, different body: 409 `idempotency_conflict`. Kept 24 hours.',
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
      ok: {
        201: {
          ...dataResponse('Created; status `processing`.', 'Transcript', headerRefs(RATE)),
          links: TRANSCRIPT_LINKS,
        },
        200: dataResponse(
          'The existing transcript: `reuseIfIdentical` matched, or an `Idempotency-Key` replay of a 200.',
          'Transcript',
          headerRefs(RATE),
        ),
      },
      errors: {
        400: ['validation', 'upload_mismatch'],
        402: ['insufficient_balance'],
        404: ['upload_not_found'],
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
    }),
    get: operation({
      operationId: 'listTranscripts',
      summary: 'List transcripts',
      description:
        'Newest first, without `text`, `words`, `utterances` and `diarizationSegments`. Page with `page`/`perPage` ' +
        '(with `total`), or with `cursor` (never skips or repeats). `page` is 1 to 100000 (default 1), `perPage` 1 to ' +
        '100 (default 20); `since` is inclusive, `until` exclusive.',
      tag: 'Transcripts',
      parameters: queryParameters(ListTranscriptsQuery),
      ok: { 200: dataResponse('A page of transcripts.', 'TranscriptList', headerRefs(RATE)) },
      errors: { 400: ['validation'] },
      validation: validationKeys([ListTranscriptsQuery]),
    }),
  },
  '/v1/transcripts/{id}': {
    get: operation({
      operationId: 'getTranscript',
      summary: 'Get a transcript',
      description:
        'With `wait` (1 to 60 seconds) the response is held while the transcript is processing and returns the ' +
        'moment it finishes; expiry of the wait returns it still `processing` (not an error).',
      tag: 'Transcripts',
      parameters: [transcriptId, ...queryParameters(GetTranscriptQuery)],
      ok: {
        200: dataResponse(
          'The transcript. While `processing`, `Retry-After` says how long polling is worth waiting.',
          'Transcript',
          headerRefs(RATE, ['Retry-After']),
        ),
      },
      errors: { 400: ['validation'], 404: ['not_found'] },
      validation: validationKeys([GetTranscriptQuery]),
    }),
    delete: operation({
      operationId: 'deleteTranscript',
      summary: 'Delete a transcript',
      description: 'Erases text, words and stored audio irrecoverably; the usage record stays.',
      tag: 'Transcripts',
      parameters: [transcriptId],
      ok: { 200: dataResponse('Deleted.', 'DeletedTranscript', headerRefs(RATE)) },
      errors: { 404: ['not_found'], 409: ['transcript_processing'] },
    }),
  },
  '/v1/transcripts/{id}/cancel': {
    post: operation({
      operationId: 'cancelTranscript',
      summary: 'Cancel a processing transcript',
      description: 'Stops it at once and releases its hold; nothing is charged. No request body.',
      tag: 'Transcripts',
      parameters: [transcriptId],
      ok: { 200: dataResponse('The transcript, status `canceled`.', 'Transcript', headerRefs(RATE)) },
      errors: { 404: ['not_found'], 409: ['transcript_finished'] },
    }),
  },
  '/v1/transcripts/{id}/subtitles': {
    get: operation({
      operationId: 'getTranscriptSubtitles',
      summary: 'Export a finished transcript as subtitles or text',
      description:
        'SubRip (`srt`), WebVTT (`vtt`) or plain text (`txt`), cut into cues by line length, lines per cue and cue ' +
        'duration; speaker labels when the transcript was diarized.',
      tag: 'Transcripts',
      parameters: [transcriptId, ...queryParameters(SubtitlesQuery)],
      ok: {
        200: {
          description: 'The document in the media type of `format`, with `charset=utf-8`.',
          headers: headerRefs([...RATE, 'Content-Disposition']),
          content: Object.fromEntries(
            Object.values(SUBTITLE_CONTENT_TYPES).map((type) => [type, { schema: { type: 'string' } }]),
          ),
        },
      },
      errors: {
        400: ['validation'],
        404: ['not_found'],
        409: ['transcript_processing', 'transcript_not_done'],
      },
      validation: validationKeys([SubtitlesQuery]),
      optionalErrorHeaders: { 409: ['Retry-After'] },
    }),
  },
  '/v1/transcripts/{id}/webhook-deliveries': {
    get: operation({
      operationId: 'listWebhookDeliveries',
      summary: 'Webhook delivery history',
      description: 'Every attempt, automatic and manual, oldest first.',
      tag: 'Webhooks',
      parameters: [transcriptId],
      ok: {
        200: dataResponse(
          'Delivery records, oldest first.',
          { type: 'array', items: { $ref: '#/components/schemas/WebhookDelivery' } },
          headerRefs(RATE),
        ),
      },
      errors: { 404: ['not_found'] },
    }),
    post: operation({
      operationId: 'replayWebhook',
      summary: 'Replay the completion notice',
      description:
        'Sends the notice again at once, while the request waits (a manual attempt: it continues the attempt count and ' +
        'is never retried automatically). No request body.',
      tag: 'Webhooks',
      parameters: [transcriptId],
      ok: {
        201: dataResponse(
          'The delivery record of the attempt just made.',
          'WebhookDelivery',
          headerRefs(RATE),
        ),
      },
      errors: { 404: ['not_found'], 409: ['no_webhook'] },
    }),
  },
  '/v1/uploads': {
    post: operation({
      operationId: 'createUpload',
      summary: 'Upload a file (or create an empty upload)',
      description:
        'The raw body is the file (up to 100 MB in one request); no body creates an empty upload to fill with PUT.',
      tag: 'Uploads',
      parameters: queryParameters(UploadQuery),
      requestBody: {
        required: false,
        content: {
          'application/octet-stream': {
            schema: { type: 'string', contentMediaType: 'application/octet-stream' },
          },
        },
      },
      ok: { 201: { ...dataResponse('Created.', 'Upload', headerRefs(NO_STORE)), links: UPLOAD_LINKS } },
      errors: {
        400: ['validation'],
        402: ['insufficient_balance'],
        413: ['payload_too_large', 'upload_quota_exceeded'],
        503: ['unavailable'],
      },
      validation: validationKeys([UploadQuery]),
      errorHeaders: NO_STORE,
    }),
  },
  '/v1/uploads/{id}': {
    get: operation({
      operationId: 'getUpload',
      summary: 'Get an upload',
      description: '`receivedBytes` is where to resume an interrupted upload.',
      tag: 'Uploads',
      parameters: [uploadId],
      ok: { 200: dataResponse('The upload.', 'Upload', headerRefs(NO_STORE)) },
      errors: { 404: ['upload_not_found'] },
      errorHeaders: NO_STORE,
    }),
    put: operation({
      operationId: 'appendUploadChunk',
      summary: 'Append a chunk',
      description:
        'Raw bytes (up to 16 MiB) appended to the end of the file; chunks in order, one at a time.',
      tag: 'Uploads',
      parameters: [uploadId],
      requestBody: {
        required: true,
        content: {
          'application/octet-stream': {
            schema: { type: 'string', contentMediaType: 'application/octet-stream' },
          },
        },
      },
      ok: {
        200: dataResponse(
          'The upload, with the accumulated `receivedBytes`.',
          'Upload',
          headerRefs(NO_STORE),
        ),
      },
      errors: {
        400: ['chunk_empty'],
        402: ['insufficient_balance'],
        404: ['upload_not_found'],
        409: ['upload_busy'],
        413: ['chunk_too_large', 'upload_too_large', 'upload_quota_exceeded'],
        503: ['unavailable'],
      },
      errorHeaders: NO_STORE,
    }),
  },
  '/v1/balance': {
    get: operation({
      operationId: 'getBalance',
      summary: 'Read the balance',
      tag: 'Account',
      ok: { 200: dataResponse('The balance.', 'Balance', headerRefs(RATE)) },
    }),
  },
  '/v1/limits': {
    get: operation({
      operationId: 'getLimits',
      summary: 'Read the limits',
      tag: 'Account',
      ok: { 200: dataResponse('The limits that apply to this account.', 'Limits', headerRefs(RATE)) },
    }),
  },
  '/v1/openapi.json': {
    get: operation({
      operationId: 'getOpenApiDocument',
      summary: 'This document',
      description: 'No key needed; limited per client address.',
      tag: 'Meta',
      public: true,
      ok: {
        200: {
          description: 'The OpenAPI document.',
          headers: headerRefs(RATE),
          content: {
            'application/json': { schema: { type: 'object', required: ['openapi', 'info', 'paths'] } },
          },
        },
      },
    }),
  },
  '/healthz': {
    get: {
      operationId: 'healthz',
      summary: 'Liveness',
      tags: ['Meta'],
      security: [],
      responses: { 200: dataResponse('The process is up.', 'Health', headerRefs(['X-Request-Id'])) },
    },
  },
  '/readyz': {
    get: {
      operationId: 'readyz',
      summary: 'Readiness (Postgres and Redis reachable)',
      tags: ['Meta'],
      security: [],
      responses: {
        200: dataResponse('Ready.', 'Readiness', headerRefs(['X-Request-Id'])),
        503: dataResponse(
          'Postgres or Redis unreachable, or shutting down.',
          'Readiness',
          headerRefs(['X-Request-Id']),
        ),
      },
    },
  },
};

const webhooks: Json = {
  transcriptFinished: {
    post: {
      summary: 'Completion notice',
      description:
        'Sent to `webhookUrl` when the transcript reaches `done` or `failed` (never for `canceled`). A 2xx answer ' +
        'acknowledges; anything else (3xx included: redirects are not followed), a 10 s time-out or no answer is ' +
        'retried after 30 s, 1 min, 5 min, 10 min, 30 min, 1 h, 1 h, 2 h, 2 h, 2 h (11 attempts, about 9 hours). ' +
        'Verify `Hark-Signature` over the raw body before parsing it.',
      parameters: [
        {
          name: WEBHOOK_HEADERS.signature,
          in: 'header',
          required: true,
          description:
            '`t=<unix seconds>,v1=<hex>`: `v1` is the HMAC-SHA256 of `<t>.<raw body>`, keyed with the lowercase hex ' +
            'SHA-256 of the API key that created the transcript. Compare in constant time and reject an old `t`.',
          schema: { type: 'string', pattern: '^t=[0-9]+(,v1=[0-9a-f]{64})+$' },
        },
        {
          name: WEBHOOK_HEADERS.deliveryId,
          in: 'header',
          required: true,
          description:
            'Identifies the notice; the same on every attempt of one transcript, so receivers can drop duplicates.',
          schema: { type: 'string' },
        },
        {
          name: 'User-Agent',
          in: 'header',
          required: true,
          schema: { type: 'string', const: WEBHOOK_HEADERS.userAgent },
        },
      ],
      requestBody: {
        required: true,
        description: 'The transcript as a list item, as a bare JSON object (not wrapped in `data`).',
        content: { 'application/json': json('TranscriptListItem') },
      },
      responses: {
        '2XX': { description: 'Acknowledged: no more attempts.' },
        default: { description: 'Not delivered: retried on the schedule above.' },
      },
    },
  },
};

export type OpenApiDocument = Json & { openapi: '3.1.0'; paths: Record<string, Record<string, Json>> };

export function buildOpenApiDocument(): OpenApiDocument {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Hark transcription API',
      version: API_VERSION,
      description:
        'Asynchronous audio transcription: create a transcript from a URL or an upload, then poll (optionally with ' +
        '`wait`) or receive a signed webhook. Success bodies are `{data}`, failures `{error}`. Amounts are US cents, ' +
        'fractional. Request schemas carry `x-error`: the key reported in `error.fields` when that field is invalid. ' +
        'A string field of a body or query holding U+0000 is refused with its key; a query ' +
        'parameter is a plain value sent at most once (`status[]=done` or `status=done&status=failed` is invalid).',
    },
    servers: [{ url: '{baseUrl}', variables: { baseUrl: { default: 'http://127.0.0.1:3000' } } }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'Transcripts' },
      { name: 'Uploads' },
      { name: 'Webhooks' },
      { name: 'Account' },
      { name: 'Meta', description: 'Health and this document; no key needed.' },
      OPENAI_TAG,
    ],
    paths: { ...paths, ...OPENAI_PATHS } as OpenApiDocument['paths'],
    webhooks,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key (`tk_` followed by 32+ URL-safe characters).',
        },
      },
      headers: HEADERS,
      responses: sharedResponses(),
      schemas: {
        CreateTranscriptRequest: plain(CreateTranscriptBody),
        ...Object.fromEntries(
          Object.entries(RESPONSE_COMPONENTS).map(([name, schema]) => [name, plain(schema)]),
        ),
        ...OPENAI_SCHEMAS,
      },
    },
  };
}

/** The exact bytes of docs/openapi.json. */
export function serializeOpenApiDocument(doc: OpenApiDocument = buildOpenApiDocument()): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}
