// The API's resources as they arrive in `data`, written from api-spec.md and the API's serializers
// (apps/api/src/services/*-view.ts, packages/transcripts/src/list-item.ts).

export type TranscriptStatus = 'processing' | 'done' | 'failed' | 'canceled';

/** `error.code` of a `failed` transcript. */
export type TranscriptFailureCode =
  | 'audio_too_long'
  | 'insufficient_balance'
  | 'audio_unreachable'
  | 'audio_invalid'
  | 'audio_too_large'
  | 'audio_mismatch'
  | 'engine_failed';

export interface Word {
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
  text: string;
  /** Speaker label (`A`, `B`, ...); null when speakers were not requested. */
  speaker: string | null;
}

export interface Utterance {
  start: number;
  end: number;
  text: string;
  speaker: string | null;
  /** True when another speaker talked during part of the block. */
  overlap: boolean;
}

export interface DiarizationSegment {
  start: number;
  end: number;
  /** More than one name means overlapping speech. */
  speakers: string[];
}

/** A transcript in a list, and the body of a webhook notice: no content fields. */
export interface TranscriptListItem {
  id: string;
  status: TranscriptStatus;
  /** Set only when `status` is `failed`. */
  error: { code: TranscriptFailureCode; message: string } | null;
  /** Requested or detected language code; null while processing. */
  language: string | null;
  /** Real audio duration, measured on completion; 0 until `done`. */
  durationSeconds: number;
  /** Null when speakers were not requested (0 means asked and none found). */
  speakerCount: number | null;
  /** Charged amount in US cents, fractional; 0 until `done`, always 0 when failed or canceled. */
  cost: number;
  currency: 'USD';
  model: string;
  /** The audio URL sent; null when the audio came from an upload. */
  url: string | null;
  retentionDays: number | null;
  externalId: string | null;
  metadata: Record<string, string> | null;
  /** ISO 8601. */
  createdAt: string;
}

/** A whole transcript (`data` of create, get, cancel). Content fields are null until `done`. */
export interface Transcript extends TranscriptListItem {
  text: string | null;
  words: Word[] | null;
  utterances: Utterance[] | null;
  /** Null when speakers were not requested. */
  diarizationSegments: DiarizationSegment[] | null;
}

/** The body of a completion notice (signed with `Hark-Signature`). */
export type WebhookNotice = TranscriptListItem;

export interface TranscriptList {
  /** Newest first. */
  transcripts: TranscriptListItem[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
  /** Total matching the filter; null when paging by cursor. */
  total: number | null;
  /** 1-based; null when paging by cursor. */
  page: number | null;
  perPage: number;
}

export interface DeletedTranscript {
  id: string;
  deleted: true;
}

export interface Upload {
  id: string;
  /** Bytes durably stored: where an interrupted upload resumes. */
  receivedBytes: number;
  expectedBytes: number | null;
  sha256: string | null;
  createdAt: string;
}

export interface Balance {
  currency: 'USD';
  /** US cents, fractional. */
  total: number;
  reserved: number;
  /** `total - reserved`. */
  available: number;
}

export interface RateLimitRule {
  /** e.g. `POST /v1/transcripts`. */
  endpoint: string;
  max: number;
  windowSeconds: number;
}

export interface Limits {
  audio: { maxDurationSeconds: number; formats: string[] };
  upload: {
    maxBytes: number;
    maxChunkBytes: number;
    maxRequestBytes: number;
    /** Bytes the account may hold in uploads no transcript has used yet (absent on older servers). */
    quotaBytes?: number;
  };
  glossary: { maxEntries: number; maxTermChars: number };
  /** `maxRunning` null means no limit. */
  concurrency: { maxRunning: number | null };
  rateLimits: RateLimitRule[];
  idempotencyKeyMaxChars: number;
}

export interface WebhookDelivery {
  id: string;
  transcriptId: string;
  url: string;
  /** 1 on the first try; a replay continues the count. */
  attempt: number;
  /** True only for a 2xx answer. */
  delivered: boolean;
  /** Null when there was no answer (time-out, DNS, refused). */
  statusCode: number | null;
  /** What stopped the request on the service side; null when the endpoint answered. */
  error: string | null;
  /** Start of the response body with anything credential-like removed. */
  responsePreview: string | null;
  durationMs: number | null;
  /** True for a replay requested by the caller. */
  manual: boolean;
  createdAt: string;
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
