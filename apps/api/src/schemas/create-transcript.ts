import { HarkError, normaliseLanguage, parseOrThrow } from '@hark/core';
import { checkUrlShape } from '@hark/http';
import type { Static } from '@sinclair/typebox';
import { idempotencyKeyValid } from './idempotency-key';
import { CreateTranscriptBody } from './transcript.schemas';

/**
 * POST /v1/transcripts: the body and `Idempotency-Key` parsed into the service's input. Every
 * rule that needs nothing but the request lives here (the schema's keys, then the rules across
 * fields); the webhook URL's DNS check is the service's (`TranscriptService.create`).
 */
export type CreateTranscriptFields = Static<typeof CreateTranscriptBody>;
export type Speakers = true | number | { min: number; max: number } | null;

export type CreateTranscriptInput = CreateTranscriptFields & {
  speakersParsed: Speakers;
  /** `language` as a normalised code; null when absent. */
  languageCode: string | null;
};

export interface CreateTranscriptRequest {
  input: CreateTranscriptInput;
  idempotencyKey: string | undefined;
}

function parseSpeakers(v: CreateTranscriptFields['speakers']): Speakers {
  if (v === undefined || v === false) return null;
  if (v === true || typeof v === 'number') return v;
  const [min, max] = v.split('-').map(Number) as [number, number];
  return { min, max };
}

/** An http(s) URL without credentials (the webhook's public-address check adds DNS). */
const isHttpUrl = (v: string): boolean => checkUrlShape(v).ok;

/**
 * Schema keys and cross-field rules, all reported together: 400 `validation` with every field's
 * key. A body that is not an object is `body_invalid` (with the key's own error, if any).
 */
export function parseCreateTranscript(body: unknown, idempotencyKey?: unknown): CreateTranscriptRequest {
  const fields: Record<string, string> = {};
  if (!idempotencyKeyValid(idempotencyKey)) fields.idempotencyKey = 'idempotency_key_invalid';
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw HarkError.validation({ ...fields, body: 'body_invalid' });
  }
  try {
    parseOrThrow(CreateTranscriptBody, body);
  } catch (e) {
    if (!(e instanceof HarkError) || !e.fields) throw e;
    Object.assign(fields, e.fields);
  }
  const b = body as CreateTranscriptFields;
  if ((b.url === undefined) === (b.uploadId === undefined)) fields.url = 'url_or_upload_id';
  else if (b.url !== undefined && !fields.url && !isHttpUrl(b.url)) fields.url = 'url_invalid';
  let languageCode: string | null = null;
  if (typeof b.language === 'string' && !fields.language) {
    languageCode = normaliseLanguage(b.language);
    if (!languageCode) fields.language = 'language_invalid';
  }
  if (typeof b.speakers === 'string' && !fields.speakers) {
    const [min, max] = b.speakers.split('-').map(Number) as [number, number];
    if (min > max) fields.speakers = 'speakers_invalid';
  }
  if (typeof b.webhookUrl === 'string' && !fields.webhookUrl && !isHttpUrl(b.webhookUrl)) {
    fields.webhookUrl = 'webhook_url_invalid';
  }
  if (b.reuseIfIdentical === true && b.url !== undefined && !fields.url)
    fields.reuseIfIdentical = 'reuse_needs_sha256';
  if (Object.keys(fields).length > 0) throw HarkError.validation(fields);
  return {
    input: { ...b, speakersParsed: parseSpeakers(b.speakers), languageCode },
    idempotencyKey: idempotencyKey as string | undefined,
  };
}
