// The API's resources as they arrive in `data`, and its error codes: generated from docs/openapi.json
// into ./generated/api-types.ts (`pnpm openapi` writes both), re-exported here by the names the SDK has
// always used. The request parameters below are the SDK's own (they accept more convenient forms,
// e.g. a `Date`); src/generated/api-types.spec.ts checks them against the documented request body.
import type { Limits as ApiLimits, TranscriptListItem, TranscriptStatus } from './generated/api-types';

export type {
  Balance,
  DeletedTranscript,
  DiarizationSegment,
  RateLimitRule,
  Transcript,
  TranscriptFailureCode,
  TranscriptList,
  TranscriptListItem,
  TranscriptStatus,
  Upload,
  Utterance,
  WebhookDelivery,
  Word,
} from './generated/api-types';

/** The body of a completion notice (signed with `Hark-Signature`). */
export type WebhookNotice = TranscriptListItem;

/** The service's limits. `upload.quotaBytes` may be absent: servers older than the upload quota omit it. */
export interface Limits extends Omit<ApiLimits, 'upload'> {
  upload: Omit<ApiLimits['upload'], 'quotaBytes'> & Partial<Pick<ApiLimits['upload'], 'quotaBytes'>>;
}

export interface CreateTranscriptParams {
  /** Public http(s) audio URL. Exactly one of `url` or `uploadId`. */
  url?: string;
  /** Id of a finished upload. Exactly one of `url` or `uploadId`. */
  uploadId?: string;
  /** Language code; omit to auto-detect. */
  language?: string;
  /** `true` (count unknown), an exact count 1-20, or a range `"2-4"`. Changes the hourly rate. */
  speakers?: boolean | number | `${number}-${number}`;
  /** Receives a signed POST when the transcript reaches `done` or `failed`. */
  webhookUrl?: string;
  /** What the engine hears -> what to write. */
  glossary?: Record<string, string>;
  externalId?: string;
  metadata?: Record<string, string>;
  /** 1-365; omit to follow the account default. */
  retentionDays?: number;
  /** Return the account's existing transcript of the same audio (upload created with `sha256`). */
  reuseIfIdentical?: boolean;
}

export interface ListTranscriptsParams {
  /** 1-based page (ignored when `cursor` is given). */
  page?: number;
  /** 1-100, default 20. */
  perPage?: number;
  status?: TranscriptStatus;
  externalId?: string;
  cursor?: string;
  /** Created at or after (ISO 8601 or a Date). */
  since?: string | Date;
  /** Created before (ISO 8601 or a Date). */
  until?: string | Date;
}

export type SubtitleFormat = 'srt' | 'vtt' | 'txt';

export interface SubtitleOptions {
  format: SubtitleFormat;
  /** Longest line, in characters. */
  maxLineLength?: number;
  /** Longest cue, in seconds. */
  maxCueDuration?: number;
  /** Lines per cue. */
  maxLines?: number;
  /** Prefix cues with the speaker label (diarized transcripts). */
  speakerLabels?: boolean;
}
