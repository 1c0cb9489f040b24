import { moneyToJson } from '@hark/core';
import type { Transcript } from '@hark/db';

/**
 * The transcript list item: the API's list entry and, unchanged, the webhook body. One
 * implementation shared by apps/api and apps/webhook-dispatcher so the two can never drift.
 * Built only from the columns below, so internal ones (holds, hashes, key ids, requested
 * options, webhookUrl) cannot leak.
 */
export type TranscriptRow = Pick<
  Transcript,
  | 'id'
  | 'status'
  | 'errorCode'
  | 'errorMessage'
  | 'language'
  | 'durationSeconds'
  | 'speakerCount'
  | 'speakers'
  | 'cost'
  | 'model'
  | 'url'
  | 'retentionDays'
  | 'externalId'
  | 'metadata'
  | 'createdAt'
>;

export function transcriptListItem(t: TranscriptRow) {
  const speakersRequested = t.speakers !== null && t.speakers !== false;
  return {
    id: t.id,
    status: t.status,
    error:
      t.status === 'failed' ? { code: t.errorCode ?? 'engine_failed', message: t.errorMessage ?? '' } : null,
    language: t.status === 'processing' ? null : t.language,
    durationSeconds: t.status === 'done' ? t.durationSeconds : 0,
    speakerCount: speakersRequested && t.status === 'done' ? t.speakerCount : null,
    cost: t.status === 'done' ? moneyToJson(t.cost) : 0,
    currency: 'USD' as const,
    model: t.model,
    url: t.url,
    retentionDays: t.retentionDays,
    externalId: t.externalId,
    metadata: (t.metadata as Record<string, string> | null) ?? null,
    createdAt: t.createdAt.toISOString(),
  };
}

export type TranscriptListItem = ReturnType<typeof transcriptListItem>;

/** Prisma `select` of exactly the columns {@link transcriptListItem} reads. */
export const TRANSCRIPT_SELECT = {
  id: true,
  status: true,
  errorCode: true,
  errorMessage: true,
  language: true,
  durationSeconds: true,
  speakerCount: true,
  speakers: true,
  cost: true,
  model: true,
  url: true,
  retentionDays: true,
  externalId: true,
  metadata: true,
  createdAt: true,
} as const;
