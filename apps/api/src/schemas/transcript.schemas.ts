import { HarkError, LIMITS, parseQueryOrThrow } from '@hark/core';
import { type Static, Type } from '@sinclair/typebox';

/** Request schemas for transcripts. `x-error` is the stable key reported in `fields`. */

/**
 * A glossary side: 1 to 80 characters, not all white space (an "empty side"), and no control
 * characters: a line break written into a word would end a subtitle cue and forge the next one.
 */
const CONTROL = '\\u0000-\\u001F\\u007F-\\u009F';
const term = {
  minLength: 1,
  maxLength: LIMITS.glossaryMaxTermChars,
  pattern: `^[^${CONTROL}]*[^\\s${CONTROL}][^${CONTROL}]*$`,
};

export const SPEAKER_RANGE = '^([1-9]|1[0-9]|20)-([1-9]|1[0-9]|20)$';

export const CreateTranscriptBody = Type.Object({
  url: Type.Optional(Type.String({ minLength: 1, maxLength: LIMITS.urlMaxChars, 'x-error': 'url_invalid' })),
  uploadId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: LIMITS.uploadIdMaxChars,
      pattern: '^[A-Za-z0-9_-]+$',
      'x-error': 'upload_id_invalid',
    }),
  ),
  language: Type.Optional(
    Type.String({ minLength: 1, maxLength: LIMITS.languageMaxChars, 'x-error': 'language_invalid' }),
  ),
  speakers: Type.Optional(
    Type.Union(
      [
        Type.Boolean(),
        Type.Integer({ minimum: LIMITS.speakersMin, maximum: LIMITS.speakersMax }),
        Type.String({ pattern: SPEAKER_RANGE }),
      ],
      { 'x-error': 'speakers_invalid' },
    ),
  ),
  webhookUrl: Type.Optional(
    Type.String({ minLength: 1, maxLength: LIMITS.urlMaxChars, 'x-error': 'webhook_url_invalid' }),
  ),
  glossary: Type.Optional(
    Type.Record(Type.String(), Type.String(term), {
      propertyNames: term,
      maxProperties: LIMITS.glossaryMaxEntries,
      'x-error': 'glossary_invalid',
    }),
  ),
  externalId: Type.Optional(
    Type.String({ minLength: 1, maxLength: LIMITS.externalIdMaxChars, 'x-error': 'external_id_invalid' }),
  ),
  metadata: Type.Optional(
    Type.Record(Type.String(), Type.String({ maxLength: LIMITS.metadataValueMaxChars }), {
      propertyNames: { minLength: 1, maxLength: LIMITS.metadataKeyMaxChars },
      maxProperties: LIMITS.metadataMaxPairs,
      'x-error': 'metadata_invalid',
    }),
  ),
  retentionDays: Type.Optional(
    Type.Integer({
      minimum: LIMITS.retentionDaysMin,
      maximum: LIMITS.retentionDaysMax,
      'x-error': 'retention_invalid',
    }),
  ),
  reuseIfIdentical: Type.Optional(Type.Boolean({ 'x-error': 'reuse_if_identical_invalid' })),
});

const dateTime = { format: 'date-time', 'x-error': 'date_invalid' };

export const ListTranscriptsQuery = Type.Object({
  page: Type.Optional(Type.String({ pattern: '^[0-9]{1,6}$', 'x-error': 'page_invalid' })),
  perPage: Type.Optional(Type.String({ pattern: '^[0-9]{1,3}$', 'x-error': 'per_page_invalid' })),
  status: Type.Optional(
    Type.Union(
      [Type.Literal('processing'), Type.Literal('done'), Type.Literal('failed'), Type.Literal('canceled')],
      {
        'x-error': 'status_invalid',
      },
    ),
  ),
  externalId: Type.Optional(
    Type.String({ minLength: 1, maxLength: LIMITS.externalIdMaxChars, 'x-error': 'external_id_invalid' }),
  ),
  cursor: Type.Optional(
    Type.String({ minLength: 1, maxLength: LIMITS.cursorMaxChars, 'x-error': 'cursor_invalid' }),
  ),
  since: Type.Optional(Type.String(dateTime)),
  until: Type.Optional(Type.String(dateTime)),
});

export type ListTranscriptsOptions = Omit<Static<typeof ListTranscriptsQuery>, 'page' | 'perPage'> & {
  page: number;
  perPage: number;
};

/** GET /v1/transcripts: the query's keys, then `page` and `perPage` within their ranges (defaults filled in). */
export function parseListTranscriptsQuery(query: Record<string, unknown>): ListTranscriptsOptions {
  const q = parseQueryOrThrow(ListTranscriptsQuery, query);
  const fields: Record<string, string> = {};
  const page = q.page === undefined ? 1 : Number(q.page);
  const perPage = q.perPage === undefined ? LIMITS.perPageDefault : Number(q.perPage);
  if (page < 1 || page > LIMITS.pageMax) fields.page = 'page_invalid';
  if (perPage < 1 || perPage > LIMITS.perPageMax) fields.perPage = 'per_page_invalid';
  if (Object.keys(fields).length) throw HarkError.validation(fields);
  return { ...q, page, perPage };
}

export const GetTranscriptQuery = Type.Object({
  wait: Type.Optional(Type.String({ pattern: '^[0-9]{1,2}$', 'x-error': 'wait_invalid' })),
});
