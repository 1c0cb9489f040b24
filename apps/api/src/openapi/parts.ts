import type { ErrorCode } from '@hark/core';
import type { TObject, TSchema } from '@sinclair/typebox';

/**
 * Building blocks of the OpenAPI document: JSON copies of the TypeBox schemas, parameters,
 * headers and responses. Kept free of route knowledge; `document.ts` assembles the paths.
 */
export type Json = Record<string, unknown>;

/** A plain JSON copy of a TypeBox schema (TypeBox's symbol keys dropped). */
export function plain(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema)) as Json;
}

/** One query parameter per property of the schema the route validates its query with. */
export function queryParameters(schema: TObject): Json[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, prop]) => {
    const s = plain(prop);
    return {
      name,
      in: 'query',
      required: required.has(name),
      ...(typeof s.description === 'string' ? { description: s.description } : {}),
      schema: s,
    };
  });
}

export function pathId(description: string): Json {
  return { name: 'id', in: 'path', required: true, description, schema: { type: 'string' } };
}

export const HEADERS = {
  'X-Request-Id': {
    description: 'Identifier of this response (also `error.requestId`); logs carry it too.',
    required: true,
    schema: { type: 'string', pattern: '^req_[A-Za-z0-9_-]{16}$' },
  },
  'RateLimit-Limit': {
    description:
      'Requests allowed per window for this route and account (per client address when unauthenticated).',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'RateLimit-Remaining': {
    description: 'Requests that still fit in the sliding window.',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'RateLimit-Reset': {
    description: 'Seconds (delta, not a timestamp) until the next slot opens.',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'Retry-After': {
    description:
      'Seconds to wait before retrying: on 429 `rate_limited`, and on a transcript still processing.',
    required: false,
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  'Content-Disposition': {
    description: '`inline; filename="<transcript id>.<format>"`.',
    required: true,
    schema: { type: 'string', pattern: '^inline; filename="[^"]+"$' },
  },
  'Cache-Control': {
    description: 'Upload state changes with every chunk: never cached.',
    required: true,
    schema: { type: 'string', const: 'no-store' },
  },
} as const;

export type HeaderName = keyof typeof HEADERS;

/** The headers of a rate-limited response. */
export const RATE: readonly HeaderName[] = [
  'X-Request-Id',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
];
/** …and of an upload's responses, never cached. */
export const NO_STORE: readonly HeaderName[] = [...RATE, 'Cache-Control'];

/** `headers` of a response: references to `components.headers`. */
export function headerRefs(names: readonly HeaderName[], optional: readonly HeaderName[] = []): Json {
  const out: Json = {};
  for (const n of names) out[n] = { $ref: `#/components/headers/${n}` };
  // Optional variants of always-required components (Retry-After is optional by definition).
  for (const n of optional) out[n] = { ...HEADERS[n], required: false };
  return out;
}

const componentRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** `{data: <component>}` as JSON. */
export function dataResponse(description: string, data: Json | string, headers: Json): Json {
  const schema = typeof data === 'string' ? componentRef(data) : data;
  return {
    description,
    headers,
    content: {
      'application/json': {
        schema: {
          type: 'object',
          required: ['data'],
          properties: { data: schema },
          additionalProperties: false,
        },
      },
    },
  };
}

/** api-spec "Codes", one line each, for response descriptions. */
export const ERROR_MEANINGS: Partial<Record<ErrorCode, string>> & Record<string, string> = {
  validation: 'invalid body or parameters; see `fields`',
  chunk_empty: 'chunk with no content',
  upload_mismatch: 'received bytes differ from the declared `expectedBytes`',
  invalid_api_key: 'missing or invalid key',
  insufficient_balance: 'no credits left',
  not_found: 'unknown transcript (or route), or one of another account, deleted or expired',
  upload_not_found: 'unknown upload or one of another account',
  upload_busy:
    'another chunk of the upload is still being written (retryable), or a transcript already uses the upload (not retryable: send the rest as a new upload)',
  idempotency_conflict: '`Idempotency-Key` reused with a different body',
  transcript_processing: 'the transcript is still processing',
  transcript_not_done: 'the transcript ended without content (failed or canceled)',
  transcript_finished: 'transcript already finished, cannot be canceled',
  no_webhook: 'no `webhookUrl`, or not finished, so nothing to replay',
  chunk_too_large: 'chunk over 16 MiB',
  upload_too_large: 'the upload would pass 2 GiB',
  upload_quota_exceeded:
    "the account's uploads not yet used by a transcript would pass its storage quota (`upload.quotaBytes` in the limits)",
  payload_too_large: 'request body over the size accepted by this route',
  headers_too_large:
    'request header fields over the size the server reads (16 KiB in all); answered before routing',
  request_timeout:
    "the request was not received in full within the server's time-outs; answered before routing, retryable",
  rate_limited: 'rate limit hit; see `Retry-After`',
  concurrency_limit: 'account without a top-up already running 2 transcriptions',
  internal: 'service fault; retry with backoff',
  unavailable:
    'the upload store is temporarily unavailable (S3 driver); nothing was recorded; retry with backoff',
};

/**
 * An error response: the envelope, with `code` narrowed to the codes this operation can answer
 * with at this status and, for `validation`, `fields` narrowed to the keys it can report.
 */
export function errorResponse(
  codes: readonly string[],
  headers: Json,
  validationFields?: Record<string, readonly string[]>,
): Json {
  const lines = codes.map((c) => `- \`${c}\`: ${ERROR_MEANINGS[c] ?? ''}`);
  const narrowed: Json = { code: { enum: [...codes] } };
  if (validationFields) {
    narrowed.fields = {
      type: 'object',
      properties: Object.fromEntries(
        Object.entries(validationFields).map(([f, keys]) => [f, { enum: [...keys] }]),
      ),
      additionalProperties: false,
    };
    lines.push(
      '',
      'Validation keys (`fields`):',
      ...Object.entries(validationFields).map(
        ([f, keys]) => `- \`${f}\`: ${keys.map((k) => `\`${k}\``).join(', ')}`,
      ),
    );
  }
  return {
    description: lines.join('\n'),
    headers,
    content: {
      'application/json': {
        schema: {
          allOf: [
            componentRef('Error'),
            { type: 'object', properties: { error: { type: 'object', properties: narrowed } } },
          ],
        },
      },
    },
  };
}

/** `{field: [key]}` from the `x-error` annotations of a request schema, plus keys reported by code. */
export function validationKeys(
  schemas: readonly TObject[],
  extra: Record<string, readonly string[]> = {},
): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const add = (field: string, key: string) => {
    const keys = (out[field] ??= []);
    if (!keys.includes(key)) keys.push(key);
  };
  for (const schema of schemas) {
    for (const [field, prop] of Object.entries(schema.properties)) {
      add(field, (prop as { 'x-error'?: string })['x-error'] ?? `${field}_invalid`);
    }
  }
  for (const [field, keys] of Object.entries(extra)) for (const k of keys) add(field, k);
  return out;
}
