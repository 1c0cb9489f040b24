import { LIMITS } from '@hark/core';
import {
  PROMPT_FIELD_MAX_CHARS,
  PROMPT_MAX_CHARS,
  RESPONSE_FORMATS,
  TIMESTAMP_GRANULARITIES,
} from '../services/openai-request';
import { type Json, RATE, headerRefs } from './parts';

/**
 * OpenAPI parts of the OpenAI-compatible audio routes (declared in `contract/routes.contract.ts`),
 * under their own tag. Their errors are OpenAI's `{error: {message, type, param, code}}`, not
 * Hark's envelope.
 */
export const OPENAI_TAG = {
  name: 'OpenAI compatibility',
  description:
    "OpenAI's audio transcription and translation endpoints, for the official `openai` clients (`baseURL` " +
    '`<service>/v1`, `apiKey` a Hark key). Each request is an ordinary transcript underneath: same key, billing, ' +
    'rate limit and concurrency limit as POST /v1/transcripts, listed by GET /v1/transcripts. The file is streamed ' +
    'to storage as it arrives and not kept while the request waits; an account has at most ' +
    "HARK_OPENAI_WAITING_PER_ACCOUNT (default 10) requests here at once. Errors use OpenAI's shape.",
};

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const segment: Json = {
  type: 'object',
  required: [
    'id',
    'seek',
    'start',
    'end',
    'text',
    'tokens',
    'temperature',
    'avg_logprob',
    'compression_ratio',
    'no_speech_prob',
  ],
  additionalProperties: false,
  description:
    "whisper.cpp's segments: timing, token ids and mean token log-probability, text after corrections and the " +
    'glossary. whisper.cpp gives no no-speech probability (`no_speech_prob` 0); `compression_ratio` is computed ' +
    'from the text. Transcripts made before segments were kept: cut from the words at sentence ends, `tokens` empty.',
  properties: {
    id: { type: 'integer', minimum: 0 },
    seek: { type: 'integer', minimum: 0 },
    start: { type: 'number', minimum: 0 },
    end: { type: 'number', minimum: 0 },
    text: { type: 'string' },
    tokens: { type: 'array', items: { type: 'integer' } },
    temperature: { type: 'number' },
    avg_logprob: { type: 'number' },
    compression_ratio: { type: 'number' },
    no_speech_prob: { type: 'number' },
  },
};

const usage: Json = {
  type: 'object',
  required: ['type', 'seconds'],
  additionalProperties: false,
  description: 'Billed seconds of audio.',
  properties: { type: { type: 'string', const: 'duration' }, seconds: { type: 'integer', minimum: 0 } },
};

export const OPENAI_SCHEMAS: Record<string, Json> = {
  OpenAiError: {
    type: 'object',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        required: ['message', 'type', 'param', 'code'],
        additionalProperties: false,
        properties: {
          message: { type: 'string' },
          type: {
            type: 'string',
            enum: [
              'invalid_request_error',
              'insufficient_quota',
              'requests',
              'server_error',
              'timeout_error',
            ],
          },
          param: { type: ['string', 'null'] },
          code: { type: ['string', 'null'] },
        },
      },
    },
  },
  OpenAiTranscription: {
    type: 'object',
    required: ['text'],
    additionalProperties: false,
    description: '`response_format` `json` (the default).',
    properties: { text: { type: 'string' }, usage },
  },
  OpenAiTranscriptionVerbose: {
    type: 'object',
    required: ['task', 'language', 'duration', 'text'],
    additionalProperties: false,
    description:
      '`response_format` `verbose_json`. `segments` unless `timestamp_granularities[]` asks for `word` alone; ' +
      '`words` when it includes `word`.',
    properties: {
      task: { type: 'string', enum: ['transcribe', 'translate'] },
      language: {
        type: 'string',
        description: 'English name in lower case (`english`); `english` for translations.',
      },
      duration: { type: 'number', minimum: 0, description: 'Seconds of audio.' },
      text: { type: 'string' },
      segments: { type: 'array', items: segment },
      words: {
        type: 'array',
        items: {
          type: 'object',
          required: ['word', 'start', 'end'],
          additionalProperties: false,
          properties: { word: { type: 'string' }, start: { type: 'number' }, end: { type: 'number' } },
        },
      },
      usage,
    },
  },
  OpenAiAudioRequest: {
    type: 'object',
    required: ['file', 'model'],
    properties: {
      file: {
        type: 'string',
        contentMediaType: 'application/octet-stream',
        description: `The audio (any format the decoder accepts). At most HARK_OPENAI_MAX_FILE_BYTES (default 25 MiB, as OpenAI; at most ${LIMITS.maxUploadRequestBytes} bytes).`,
      },
      model: {
        type: 'string',
        description:
          "`whisper-1`, or the service's own model name (the `model` of its transcripts, e.g. `whisper-base`).",
      },
      language: {
        type: 'string',
        maxLength: LIMITS.languageMaxChars,
        description: 'ISO-639-1 code of the spoken language; omit to detect it.',
      },
      prompt: {
        type: 'string',
        maxLength: PROMPT_FIELD_MAX_CHARS,
        description: `Initial prompt for the engine (whisper.cpp's \`--prompt\`); only its last ${PROMPT_MAX_CHARS} characters are used, from a word on (OpenAI uses a prompt's last 224 tokens).`,
      },
      response_format: { type: 'string', enum: [...RESPONSE_FORMATS], default: 'json' },
      temperature: {
        type: 'number',
        minimum: 0,
        maximum: 1,
        description: 'Sampling temperature (the engine still falls back upwards).',
      },
      'timestamp_granularities[]': {
        type: 'array',
        items: { type: 'string', enum: [...TIMESTAMP_GRANULARITIES] },
        description: 'With `verbose_json`: `word` adds `words`, `segment` (the default) `segments`.',
      },
      stream: { type: 'boolean', const: false, description: 'Streaming is not supported.' },
      speakers: {
        type: 'string',
        description:
          'Hark extension: `true`, a speaker count 1 to 20, or `min-max`, as on POST /v1/transcripts (changes the hourly rate).',
      },
      glossary: {
        type: 'string',
        description:
          'Hark extension: a JSON object mapping what the engine hears to what to write, as on POST /v1/transcripts.',
      },
    },
  },
};

function errorResponse(description: string, headers: Json): Json {
  return { description, headers, content: { 'application/json': { schema: ref('OpenAiError') } } };
}

/** The request body of both audio routes. */
export const OPENAI_AUDIO_REQUEST: Json = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: ref('OpenAiAudioRequest'),
      encoding: { file: { contentType: 'application/octet-stream' } },
    },
  },
};

const rate = headerRefs(RATE);

/** The error responses of both audio routes, in OpenAI's shape. */
export const OPENAI_AUDIO_RESPONSES: Record<number, Json> = {
  400: errorResponse(
    '`invalid_request_error`: a missing or invalid parameter (`param` names it; an unknown `model` is ' +
      '`model_not_found`), an empty or undecodable file, audio over 10 hours.',
    rate,
  ),
  401: errorResponse('`invalid_request_error` / `invalid_api_key`: missing or invalid key.', rate),
  409: errorResponse('`transcription_canceled`: the transcript was canceled while the request waited.', rate),
  413: errorResponse(
    '`file_too_large`: the file is over the configured maximum; `fields_too_large`: the form fields hold over 256 KiB together.',
    rate,
  ),
  429: errorResponse(
    '`requests` / `rate_limit_exceeded` (with `Retry-After`), `concurrency_limit_exceeded`, or ' +
      '`too_many_waiting_requests` (the account already has HARK_OPENAI_WAITING_PER_ACCOUNT requests on these ' +
      'routes, default 10; refused before the body is read); ' +
      '`insufficient_quota` / `insufficient_quota` when the account has no credits (with `x-should-retry: false`).',
    headerRefs(RATE, ['Retry-After']),
  ),
  // Answered by the HTTP server before any route, so in Hark's envelope like everywhere.
  408: { $ref: '#/components/responses/RequestTimeout' },
  431: { $ref: '#/components/responses/HeadersTooLarge' },
  500: errorResponse(
    '`server_error`: the transcription failed after its retries, or a service fault.',
    headerRefs(['X-Request-Id'], RATE.slice(1)),
  ),
  504: errorResponse(
    '`timeout_error` / `transcription_timeout`: still running HARK_OPENAI_WAIT_SECONDS (default 580) after the request arrived. ' +
      'The message and `Location` name the transcript; GET it later.',
    {
      ...rate,
      Location: {
        description: '`/v1/transcripts/{id}` of the transcript.',
        required: true,
        schema: { type: 'string' },
      },
    },
  ),
};
