import { parseQueryOrThrow } from '@hark/core';
import { type Static, type TObject, type TSchema, Type } from '@sinclair/typebox';

/**
 * GET /v1/transcripts/{id}/subtitles query. The OpenAPI document is built from this schema, so
 * the route must validate with {@link parseSubtitlesQuery} (defaults filled in, stable keys).
 */
export const SUBTITLE_FORMATS = ['srt', 'vtt', 'txt'] as const;

export const SubtitlesQuery = Type.Object({
  format: Type.Optional(
    Type.Unsafe<(typeof SUBTITLE_FORMATS)[number]>({
      type: 'string',
      enum: [...SUBTITLE_FORMATS],
      default: 'srt',
      'x-error': 'format_invalid',
      description: 'SubRip, WebVTT or plain text.',
    }),
  ),
  maxLineLength: Type.Optional(
    Type.Integer({
      minimum: 10,
      maximum: 200,
      default: 42,
      'x-error': 'max_line_length_invalid',
      description: 'Longest line of a cue, in characters.',
    }),
  ),
  maxCueDuration: Type.Optional(
    Type.Number({
      minimum: 1,
      maximum: 30,
      default: 6,
      'x-error': 'max_cue_duration_invalid',
      description: 'Longest cue, in seconds.',
    }),
  ),
  maxLines: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: 3,
      default: 2,
      'x-error': 'max_lines_invalid',
      description: 'Lines per cue.',
    }),
  ),
  speakerLabels: Type.Optional(
    Type.Boolean({
      default: true,
      'x-error': 'speaker_labels_invalid',
      description: 'Prefix cues with the speaker label when the transcript was diarized.',
    }),
  ),
});

export type SubtitlesOptions = Required<Static<typeof SubtitlesQuery>>;

/** Media type of each format's body. */
export const SUBTITLE_CONTENT_TYPES = {
  srt: 'application/x-subrip',
  vtt: 'text/vtt',
  txt: 'text/plain',
} as const satisfies Record<(typeof SUBTITLE_FORMATS)[number], string>;

const INTEGER = /^-?[0-9]{1,9}$/;
const NUMBER = /^-?[0-9]{1,9}(\.[0-9]{1,9})?$/;

/**
 * Query strings carry strings only: turns the ones that spell a value of the property's type
 * into that value (anything else is left for validation to refuse with the field's key).
 */
export function coerceQuery(schema: TObject, query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(query)) {
    const type = (schema.properties[key] as TSchema | undefined)?.type as unknown;
    if (typeof value !== 'string') out[key] = value;
    else if (type === 'integer' && INTEGER.test(value)) out[key] = Number(value);
    else if (type === 'number' && NUMBER.test(value)) out[key] = Number(value);
    else if (type === 'boolean' && (value === 'true' || value === 'false')) out[key] = value === 'true';
    else out[key] = value;
  }
  return out;
}

/** Validates the query (400 `validation` with the keys above) and fills in every default. */
export function parseSubtitlesQuery(query: Record<string, unknown>): SubtitlesOptions {
  return parseQueryOrThrow(SubtitlesQuery, coerceQuery(SubtitlesQuery, query)) as SubtitlesOptions;
}
