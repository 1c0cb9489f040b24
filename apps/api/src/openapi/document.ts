import { type HarkErrors, ROUTES, type RouteContract, type RouteResponse } from '../contract/routes.contract';
import { RESPONSE_COMPONENTS } from '../schemas/response.schemas';
import { CreateTranscriptBody } from '../schemas/transcript.schemas';
import { OPENAI_SCHEMAS, OPENAI_TAG } from './openai.paths';
import {
  HEADERS,
  type HeaderName,
  type Json,
  RATE,
  dataResponse,
  errorResponse,
  headerRefs,
  pathId,
  plain,
  queryParameters,
  validationKeys,
} from './parts';

/**
 * The OpenAPI 3.1 document, built by walking the route contract (`contract/routes.contract.ts`,
 * which names the schemas the API validates requests with) and the response schemas in
 * `schemas/response.schemas.ts`. Served at GET /v1/openapi.json and written
 * to docs/openapi.json by `pnpm openapi`; a unit test fails when the committed copy is stale.
 */
export const API_VERSION = '1.0.0';

/** Headers of a completion notice, as packages/webhooks sends them (checked by document.spec.ts). */
export const WEBHOOK_HEADERS = {
  signature: 'Hark-Signature',
  deliveryId: 'Hark-Delivery-Id',
  userAgent: 'Hark-Webhooks/1',
} as const;

/** Error responses most operations share, under `components.responses`. */
const SHARED_ERRORS: Record<number, { name: string; codes: string[] }> = {
  401: { name: 'Unauthorized', codes: ['invalid_api_key'] },
  408: { name: 'RequestTimeout', codes: ['request_timeout'] },
  429: { name: 'RateLimited', codes: ['rate_limited'] },
  431: { name: 'HeadersTooLarge', codes: ['headers_too_large'] },
  500: { name: 'InternalError', codes: ['internal'] },
};

/** Answered by the HTTP server before any route (no limiter ran): only the request id. */
const BEFORE_ROUTING = new Set([408, 431]);

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

/** OpenAPI links: the id a response returns feeds the operations on that resource. */
function links(operationIds: readonly string[]): Json {
  return Object.fromEntries(
    operationIds.map((operationId) => [
      operationId,
      { operationId, parameters: { id: '$response.body#/data/id' } },
    ]),
  );
}

function response(r: RouteResponse): Json {
  const headers = headerRefs(r.headers, r.optionalHeaders ?? []);
  const body =
    r.data !== undefined
      ? dataResponse(r.description, r.data, headers)
      : { description: r.description, headers, content: r.content };
  return r.links ? { ...body, links: links(r.links) } : body;
}

/** Error responses in Hark's envelope: the route's own codes plus those every route can answer with. */
function harkErrors(route: RouteContract & HarkErrors): Json {
  const errors: Record<number, string[]> = Object.fromEntries(
    Object.entries(route.errors ?? {}).map(([s, codes]) => [s, [...codes]]),
  );
  if (route.auth === 'key') (errors[401] ??= []).unshift('invalid_api_key');
  (errors[429] ??= []).unshift('rate_limited');
  (errors[408] ??= []).push('request_timeout');
  (errors[431] ??= []).push('headers_too_large');
  (errors[500] ??= []).push('internal');
  const responses: Json = {};
  for (const [status, codes] of Object.entries(errors)) {
    const s = Number(status);
    const own = s === 401 || s === 429 ? RATE : (route.errorHeaders ?? RATE);
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
        : headerRefs(own, s === 429 ? ['Retry-After'] : (route.optionalErrorHeaders?.[s] ?? []));
    responses[status] = errorResponse(
      codes,
      headers,
      codes.includes('validation')
        ? (route.validation ?? (route.query ? validationKeys([route.query]) : undefined))
        : undefined,
    );
  }
  return responses;
}

function errorResponses(route: RouteContract): Json {
  switch (route.errorShape) {
    case 'hark':
      return harkErrors(route);
    case 'openai':
      return route.errorResponses;
    case 'none':
      return {};
  }
}

/** One operation of the document, from its route's contract. */
function operation(route: RouteContract): Json {
  const parameters = [
    ...(route.pathId ? [pathId(route.pathId)] : []),
    ...(route.headerParameters ?? []),
    ...(route.query ? queryParameters(route.query) : []),
  ];
  const responses: Json = {};
  for (const [status, r] of Object.entries(route.responses)) responses[status] = response(r);
  Object.assign(responses, errorResponses(route));
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    ...(route.auth === 'key' ? {} : { security: [] }),
    ...(parameters.length ? { parameters } : {}),
    ...(route.requestBody ? { requestBody: route.requestBody } : {}),
    responses,
  };
}

/** `paths`: every route of the contract, in its order. */
function paths(): Json {
  const out: Record<string, Json> = {};
  for (const route of ROUTES as readonly RouteContract[]) {
    (out[route.path] ??= {})[route.method] = operation(route);
  }
  return out;
}

const json = (schema: string) => ({ schema: { $ref: `#/components/schemas/${schema}` } });

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
    paths: paths() as OpenApiDocument['paths'],
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
