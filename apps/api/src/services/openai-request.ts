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

/**
 * The longest prompt the engine is given: a longer one keeps its end. whisper.cpp, like OpenAI,
 * uses at most 224 tokens of a prompt (half its text context, taken from the end), which 2000
 * characters cover in most texts.
 */
export const PROMPT_MAX_CHARS = 2000;
/**
 * The longest `prompt` accepted: the multipart parser's field limit (64 KiB, body-parsers.ts; a
 * string is never longer than its UTF-8 bytes). Clients pass the previous chunk's transcript as
 * the prompt, and OpenAI accepts it, using only its end.
 */
export const PROMPT_FIELD_MAX_CHARS = 64 * 1024;

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
 * @param fields the form's fields (`readMultipartForm`: strings; `a[]` already turned into arrays)
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

  checkStream(one(fields.stream));
  const temperature = parseTemperature(one(fields.temperature));
  const prompt = parsePrompt(one(fields.prompt));

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

/**
 * Form fields carry booleans as text: Python writes `False` (`str(False)`), others `false` or `0`.
 * Streaming is refused; anything that is no boolean too.
 */
function checkStream(stream: unknown): void {
  if (stream === undefined) return;
  const value = typeof stream === 'string' ? stream.trim().toLowerCase() : null;
  if (value === 'false' || value === '0') return;
  if (value === 'true' || value === '1') {
    throw OpenAiError.invalid('Streaming is not supported for this model.', 'stream', 'unsupported_value');
  }
  throw OpenAiError.invalid("Invalid value for 'stream': true or false.", 'stream', 'invalid_value');
}

/**
 * A decimal number as the clients print floats: `0.2`, `0.`, `.5`, and the exponent form of
 * small ones (Python's `1e-05`, Node's `1e-7`). Not what `Number` also takes: hex, `Infinity`,
 * blanks (which it reads as 0).
 */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;

/** Null (the engine's default) when absent or empty. */
function parseTemperature(raw: unknown): number | null {
  if (raw === undefined || raw === '') return null;
  const value = typeof raw === 'string' && DECIMAL.test(raw.trim()) ? Number(raw) : NaN;
  if (!(value >= 0 && value <= 1)) {
    throw OpenAiError.invalid(
      "Invalid value for 'temperature': a number from 0 to 1.",
      'temperature',
      'invalid_value',
    );
  }
  return value === 0 ? 0 : value; // -0 as 0
}

/** Null when absent or blank; a long one keeps its end (see PROMPT_MAX_CHARS). */
function parsePrompt(raw: unknown): string | null {
  if (raw === undefined) return null;
  // Postgres text cannot hold U+0000 (the create path refuses it in every field too).
  if (typeof raw !== 'string' || raw.length > PROMPT_FIELD_MAX_CHARS || containsNul(raw)) {
    throw OpenAiError.invalid(
      `Invalid value for 'prompt': text without NUL characters, at most ${PROMPT_FIELD_MAX_CHARS} characters.`,
      'prompt',
      'invalid_value',
    );
  }
  const prompt = promptTail(raw);
  return prompt.trim() === '' ? null : prompt;
}

/**
 * The last PROMPT_MAX_CHARS characters, starting at a word: the engine uses the end of a prompt
 * (the words just before the audio). Text without spaces is cut anywhere but inside a surrogate pair.
 */
export function promptTail(prompt: string): string {
  if (prompt.length <= PROMPT_MAX_CHARS) return prompt;
  const tail = prompt.slice(-PROMPT_MAX_CHARS);
  if (/\s/.test(prompt.charAt(prompt.length - PROMPT_MAX_CHARS - 1))) return tail.trimStart();
  // Cut inside a word: drop that word's end, unless the tail is all one word.
  const space = tail.search(/\s/);
  const fromWord = space === -1 ? '' : tail.slice(space).trimStart();
  if (fromWord !== '') return fromWord;
  return /^[\uDC00-\uDFFF]/.test(tail) ? tail.slice(1) : tail;
}
