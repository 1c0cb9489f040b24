import { moneyToJson } from '@hark/core';
import type { Transcript, TranscriptContent } from '@hark/db';

/**
 * Serializers: the only way transcript rows leave the API, so internal columns (holds, hashes,
 * key ids, requested options) never leak. The list item is also the webhook body.
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
    error: t.status === 'failed' ? { code: t.errorCode ?? 'engine_failed', message: t.errorMessage ?? '' } : null,
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

export function transcriptView(t: TranscriptRow, content: TranscriptContent | null) {
  const item = transcriptListItem(t);
  const done = t.status === 'done' && content !== null;
  const speakersRequested = t.speakers !== null && t.speakers !== false;
  return {
    id: item.id,
    status: item.status,
    text: done ? content.text : null,
    words: done ? content.words : null,
    utterances: done ? content.utterances : null,
    diarizationSegments: done && speakersRequested ? (content.diarizationSegments ?? null) : null,
    ...Object.fromEntries(Object.entries(item).filter(([k]) => k !== 'id' && k !== 'status')),
  };
}

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
