import { CODE_STATUS, type ErrorCode, TRANSCRIPT_FAILURE_CODES } from '@hark/core';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { UploadSchema } from './upload.schemas';

/**
 * Response bodies, in one place: the OpenAPI document is built from these, and with
 * HARK_VALIDATE_RESPONSES=1 every response the API sends is checked against that document.
 * Objects are closed (`additionalProperties: false`) so an internal column that leaks through a
 * serializer is a contract failure, not a silent addition.
 */
const closed = { additionalProperties: false } as const;

/** `T` or null (`anyOf`, which JSON Schema 2020-12 and draft-07 read alike). */
export function Nullable<T extends TSchema>(schema: T, options: { description?: string } = {}) {
  return Type.Union([schema, Type.Null()], options);
}

/** A string enum rendered as `enum` (TypeBox unions of literals render as `anyOf` of `const`). */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string } = {},
) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/** `$ref` to a schema under `components.schemas`, keeping the static type of the target. */
export function componentRef<T extends TSchema>(name: string, _target: T) {
  return Type.Unsafe<Static<T>>({ $ref: `#/components/schemas/${name}` });
}

export const TRANSCRIPT_STATUSES = ['processing', 'done', 'failed', 'canceled'] as const;

const seconds = (description: string) => Type.Number({ minimum: 0, description });

export const WordSchema = Type.Object(
  {
    start: seconds('Seconds from the start of the audio.'),
    end: seconds('Seconds from the start of the audio.'),
    text: Type.String(),
    speaker: Nullable(Type.String(), {
      description: 'Speaker label (A, B, ...); null when speakers were not requested.',
    }),
  },
  closed,
);

export const UtteranceSchema = Type.Object(
  {
    start: seconds('Seconds from the start of the audio.'),
    end: seconds('Seconds from the start of the audio.'),
    text: Type.String(),
    speaker: Nullable(Type.String(), { description: 'Null when speakers were not requested.' }),
    overlap: Type.Boolean({ description: 'True when another speaker talked during part of the block.' }),
  },
  closed,
);

export const DiarizationSegmentSchema = Type.Object(
  {
    start: seconds('Seconds from the start of the audio.'),
    end: seconds('Seconds from the start of the audio.'),
    speakers: Type.Array(Type.String(), { description: 'More than one name means overlapping speech.' }),
  },
  closed,
);

export const TranscriptFailureSchema = Type.Object(
  {
    code: StringEnum(TRANSCRIPT_FAILURE_CODES),
    message: Type.String(),
  },
  { ...closed, description: 'Set only when status is `failed`.' },
);

/** Fields shared by the Transcript, the list item and the webhook body, in the order they are sent. */
const listItemFields = {
  id: Type.String({ description: 'Transcript identifier.' }),
  status: StringEnum(TRANSCRIPT_STATUSES),
  error: Nullable(componentRef('TranscriptFailure', TranscriptFailureSchema), {
    description: 'Set only when status is `failed`; null otherwise (also for `canceled`).',
  }),
  language: Nullable(Type.String(), {
    description: 'Detected or requested language; null while processing.',
  }),
  durationSeconds: Type.Integer({
    minimum: 0,
    description: 'Real audio duration measured on completion; 0 while processing.',
  }),
  speakerCount: Nullable(Type.Integer({ minimum: 0 }), {
    description:
      'Distinct speakers found; null when `speakers` was not requested (0 means asked and none found).',
  }),
  cost: Type.Number({
    minimum: 0,
    description: 'Charged, in US cents (fractional); 0 while processing and on failed.',
  }),
  currency: Type.Literal('USD'),
  model: Type.String({ description: 'Model that produced the transcript, e.g. `whisper-base`.' }),
  url: Nullable(Type.String(), {
    description: 'The audio URL sent; null when the audio came from an upload.',
  }),
  retentionDays: Nullable(Type.Integer({ minimum: 1, maximum: 365 }), {
    description: 'Days the content is kept from creation; null follows the account default.',
  }),
  externalId: Nullable(Type.String(), { description: "Caller's own id, returned exactly as sent." }),
  metadata: Nullable(Type.Record(Type.String(), Type.String()), {
    description: 'Pairs sent with the request, unchanged.',
  }),
  createdAt: Type.String({ format: 'date-time' }),
};

export const TranscriptListItemSchema = Type.Object(listItemFields, {
  ...closed,
  description:
    'A transcript without `text`, `words`, `utterances` and `diarizationSegments`; also the webhook body.',
});

const { id, status, ...listItemRest } = listItemFields;

export const TranscriptSchema = Type.Object(
  {
    id,
    status,
    text: Nullable(Type.String(), { description: 'Null until status is `done`.' }),
    words: Nullable(Type.Array(componentRef('Word', WordSchema)), {
      description: 'Every word; null until `done`.',
    }),
    utterances: Nullable(Type.Array(componentRef('Utterance', UtteranceSchema)), {
      description: 'Blocks of continuous speech by one speaker; null until `done`.',
    }),
    diarizationSegments: Nullable(Type.Array(componentRef('DiarizationSegment', DiarizationSegmentSchema)), {
      description: 'Speaker timeline before words were labeled; null when speakers were not requested.',
    }),
    ...listItemRest,
  },
  closed,
);

export const TranscriptListSchema = Type.Object(
  {
    transcripts: Type.Array(componentRef('TranscriptListItem', TranscriptListItemSchema), {
      description: 'Newest first.',
    }),
    nextCursor: Nullable(Type.String(), {
      description: 'Pass back as `cursor` for the next page; null on the last page.',
    }),
    total: Nullable(Type.Integer({ minimum: 0 }), {
      description: 'Total matching the filter; null when paging by `cursor`.',
    }),
    page: Nullable(Type.Integer({ minimum: 1 }), {
      description: '1-based page number; null when paging by `cursor`.',
    }),
    perPage: Type.Integer({ minimum: 1, maximum: 100 }),
  },
  closed,
);

export const DeletedTranscriptSchema = Type.Object(
  { id: Type.String(), deleted: Type.Literal(true) },
  closed,
);

export const BalanceSchema = Type.Object(
  {
    currency: Type.Literal('USD'),
    total: Type.Number({ minimum: 0, description: 'Credits on the account, US cents (fractional).' }),
    reserved: Type.Number({ minimum: 0, description: 'Held by running transcriptions.' }),
    available: Type.Number({ minimum: 0, description: 'total - reserved; at 0 new transcriptions get 402.' }),
  },
  closed,
);

const RateLimitRuleSchema = Type.Object(
  {
    endpoint: Type.String({ description: 'Method and path, e.g. `POST /v1/transcripts`.' }),
    max: Type.Integer({ minimum: 1 }),
    windowSeconds: Type.Integer({ minimum: 1 }),
  },
  closed,
);

export const LimitsSchema = Type.Object(
  {
    audio: Type.Object(
      {
        maxDurationSeconds: Type.Integer(),
        formats: Type.Array(Type.String(), { description: 'Container formats the decoder accepts.' }),
      },
      closed,
    ),
    upload: Type.Object(
      {
        maxBytes: Type.Integer({ description: 'Largest file across all chunks.' }),
        maxChunkBytes: Type.Integer({ description: 'Largest single chunk body.' }),
        maxRequestBytes: Type.Integer({ description: 'Largest body in one request.' }),
        quotaBytes: Type.Integer({
          description:
            'Bytes this account may hold in uploads no transcript has used yet (a declared `expectedBytes` counts in full from creation); past it, POST and PUT are refused with 413 `upload_quota_exceeded`. While `available` is 0 this is the smaller no-credit allowance, past which they are refused with 402 `insufficient_balance`.',
        }),
      },
      closed,
    ),
    glossary: Type.Object({ maxEntries: Type.Integer(), maxTermChars: Type.Integer() }, closed),
    concurrency: Type.Object(
      {
        maxRunning: Nullable(Type.Integer(), {
          description: 'Null means no limit (after the first top-up).',
        }),
      },
      closed,
    ),
    rateLimits: Type.Array(RateLimitRuleSchema),
    idempotencyKeyMaxChars: Type.Integer(),
  },
  closed,
);

export const WebhookDeliverySchema = Type.Object(
  {
    id: Type.String({ description: 'Delivery id.' }),
    transcriptId: Type.String(),
    url: Type.String({ description: 'Where it was sent, as given in `webhookUrl`.' }),
    attempt: Type.Integer({ minimum: 1, description: '1 on the first try; a replay continues the count.' }),
    delivered: Type.Boolean({ description: 'True only for a 2xx answer.' }),
    statusCode: Nullable(Type.Integer(), { description: "The endpoint's answer; null when there was none." }),
    error: Nullable(Type.String(), {
      description:
        'What stopped the request on the service side; null when the endpoint answered. One of `timeout`, `dns_failed`, `blocked_address` (the host resolves to an address that is not public), `connection_refused`, `connection_reset`, `tls_failed`, `too_many_redirects`, `request_failed`, or `interrupted`: the service stopped during this automatic attempt (the endpoint may have received it) and did not make it again, since a later attempt was acknowledged.',
    }),
    responsePreview: Nullable(Type.String({ maxLength: 512 }), {
      description: 'Start of the response body (at most 512 characters), credential-like content removed.',
    }),
    durationMs: Nullable(Type.Integer({ minimum: 0 })),
    manual: Type.Boolean({ description: 'True when the attempt was requested by the caller.' }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  closed,
);

export const ERROR_CODES = Object.keys(CODE_STATUS) as ErrorCode[];

export const ErrorSchema = Type.Object(
  {
    error: Type.Object(
      {
        code: StringEnum(ERROR_CODES, { description: 'Kind of error; branch on it.' }),
        message: Type.String({ description: 'Plain-English explanation.' }),
        retryable: Type.Boolean({ description: 'Whether repeating the same request can succeed.' }),
        requestId: Type.String({ description: 'Also in the `X-Request-Id` header.' }),
        fields: Type.Optional(
          Type.Record(Type.String(), Type.String(), {
            description:
              "Only for `validation`: one stable key per invalid field (see each field's `x-error`).",
          }),
        ),
      },
      closed,
    ),
  },
  closed,
);

export const HealthSchema = Type.Object({ status: Type.Literal('ok') }, closed);

export const ReadinessSchema = Type.Object(
  {
    status: StringEnum(['ready', 'unavailable', 'draining'] as const, {
      description: '`draining` once shutdown has begun (no dependency checks then).',
    }),
    postgres: Type.Optional(Type.Boolean()),
    redis: Type.Optional(Type.Boolean()),
  },
  closed,
);

export { UploadSchema };

/** Every named response schema, as it appears under `components.schemas`. */
export const RESPONSE_COMPONENTS = {
  Transcript: TranscriptSchema,
  TranscriptListItem: TranscriptListItemSchema,
  TranscriptList: TranscriptListSchema,
  TranscriptFailure: TranscriptFailureSchema,
  Word: WordSchema,
  Utterance: UtteranceSchema,
  DiarizationSegment: DiarizationSegmentSchema,
  DeletedTranscript: DeletedTranscriptSchema,
  Upload: UploadSchema,
  Balance: BalanceSchema,
  Limits: LimitsSchema,
  WebhookDelivery: WebhookDeliverySchema,
  Error: ErrorSchema,
  Health: HealthSchema,
  Readiness: ReadinessSchema,
} as const;
