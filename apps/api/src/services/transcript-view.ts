import type { TranscriptContent } from '@hark/db';
import { TRANSCRIPT_SELECT, type TranscriptRow, transcriptListItem } from '@hark/transcripts';

/**
 * Serializers: the only way transcript rows leave the API, so internal columns (holds, hashes,
 * key ids, requested options) never leak. The list item lives in @hark/transcripts because it is
 * also the webhook body the dispatcher sends; re-exported here for the API's modules.
 */
export { TRANSCRIPT_SELECT, type TranscriptRow, transcriptListItem };

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
