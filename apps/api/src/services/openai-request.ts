import { containsNul, normaliseLanguage } from '@hark/core';
import { normaliseFormBody } from './form-normalise';
import { OpenAiError } from './openai-errors';

/**
 * The form fields of POST /v1/audio/transcriptions and /v1/audio/translations, as OpenAI defines
 * them, checked and turned into a Hark create body plus engine options. Hark's own extensions
 * (`speakers`, `glossary` as a JSON string) go through the create path's own validation.
 */
export const RESPONSE_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];
export const TIMESTAMP_GRANULARITIES = ['word', 'segment'] as const;
export type Granularity = (typeof TIMESTAMP_GRANULARITIES)[number];
export type AudioTask = 'transcribe' | 'translate';

/** OpenAI's own limit is 224 tokens; whisper.cpp keeps at most half its text context. */
export const PROMPT_MAX_CHARS = 2000;

export interface OpenAiAudioRequest {
  responseFormat: ResponseFormat;
  granularities: Granularity[];
  temperature: number | null;
  prompt: string | null;
  /** Fields for TranscriptService.create (without `uploadId`, known once the file is stored). */
  createBody: Record<string, unknown>;
}

const one = (v: unknown): unknown => (Array.isArray(v) ? v[v.length - 1] : v);

/**
 * @param fields multer's `req.body` (strings; `a[]` already turned into arrays)
 * @param models the `model` values served: `whisper-1` and the service's own model name
 */
export function parseAudioRequest(
  fields: Record<string, unknown>,
  hasFile: boolean,
  models: readonly string[],
): OpenAiAudioRequest {
  if (!hasFile)
    throw OpenAiError.invalid("Missing required parameter: 'file'.", 'file', 'missing_required_parameter');
  const model = one(fields.model);
  if (typeof model !== 'string' || model === '') {
    throw OpenAiError.invalid("Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  }
  if (!models.includes(model)) {
    throw OpenAiError.invalid(
      `The model '${model}' does not exist or is not served here; use ${models.map((m) => `'${m}'`).join(' or ')}.`,
      'model',
      'model_not_found',
    );
  }

  const format = one(fields.response_format) ?? 'json';
  if (typeof format !== 'string' || !(RESPONSE_FORMATS as readonly string[]).includes(format)) {
    throw OpenAiError.invalid(
      `Invalid value for 'response_format': must be one of ${RESPONSE_FORMATS.join(', ')}.`,
      'response_format',
      'invalid_value',
    );
  }

  const stream = one(fields.stream);
  if (stream !== undefined && stream !== 'false') {
    throw OpenAiError.invalid('Streaming is not supported for this model.', 'stream', 'unsupported_value');
  }

  let temperature: number | null = null;
  const rawTemperature = one(fields.temperature);
  if (rawTemperature !== undefined && rawTemperature !== '') {
    temperature =
      typeof rawTemperature === 'string' && /^\d*\.?\d+$/.test(rawTemperature.trim())
        ? Number(rawTemperature)
        : NaN;
    if (!(temperature >= 0 && temperature <= 1)) {
      throw OpenAiError.invalid(
        "Invalid value for 'temperature': a number from 0 to 1.",
        'temperature',
        'invalid_value',
      );
    }
  }

  const rawPrompt = one(fields.prompt);
  // Postgres text cannot hold U+0000 (the create path refuses it in every field too).
  if (
    rawPrompt !== undefined &&
    (typeof rawPrompt !== 'string' || rawPrompt.length > PROMPT_MAX_CHARS || containsNul(rawPrompt))
  ) {
    throw OpenAiError.invalid(
      `Invalid value for 'prompt': at most ${PROMPT_MAX_CHARS} characters.`,
      'prompt',
      'invalid_value',
    );
  }
  const prompt = typeof rawPrompt === 'string' && rawPrompt.trim() !== '' ? rawPrompt : null;

  const rawGranularities = fields['timestamp_granularities'] ?? fields['timestamp_granularities[]'] ?? [];
  const granularities = (
    Array.isArray(rawGranularities) ? rawGranularities : [rawGranularities]
  ) as unknown[];
  for (const g of granularities) {
    if (typeof g !== 'string' || !(TIMESTAMP_GRANULARITIES as readonly string[]).includes(g)) {
      throw OpenAiError.invalid(
        "Invalid value for 'timestamp_granularities': each of word, segment.",
        'timestamp_granularities',
        'invalid_value',
      );
    }
  }

  const createBody: Record<string, unknown> = {};
  const language = one(fields.language);
  if (language !== undefined && language !== '') {
    if (typeof language !== 'string' || !normaliseLanguage(language)) {
      const shown = typeof language === 'string' ? language : JSON.stringify(language);
      throw OpenAiError.invalid(
        `Invalid language '${shown}': an ISO-639-1 code such as 'en'.`,
        'language',
        'invalid_language',
      );
    }
    createBody.language = language;
  }
  // Extensions: the create path's own rules (and validation keys) apply to them.
  const extensions = normaliseFormBody({
    ...(fields.speakers !== undefined ? { speakers: one(fields.speakers) } : {}),
    ...(fields.glossary !== undefined ? { glossary: one(fields.glossary) } : {}),
  });
  Object.assign(createBody, extensions);

  return {
    responseFormat: format as ResponseFormat,
    granularities: [...new Set(granularities as Granularity[])],
    temperature,
    prompt,
    createBody,
  };
}
