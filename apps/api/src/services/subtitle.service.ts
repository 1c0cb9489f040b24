import { HarkError } from '@hark/core';
import type { Db } from '@hark/db';
import {
  type SubtitleContent,
  type SubtitleFormat,
  type SubtitleOptions,
  renderSubtitles,
} from './subtitle-render';
import { visibleTranscripts } from './visible-transcripts';

const TRANSCRIPT_ID = /^tr_[A-Za-z0-9_-]{1,40}$/;

/** Subtitles and text exports of a done transcript. */
export class SubtitleService {
  constructor(
    private readonly db: Db,
    /** Seconds worth waiting on a processing transcript (TranscriptService's estimate). */
    private readonly retryAfterSeconds: (accountId: string, id: string) => Promise<number>,
  ) {}

  /**
   * The transcript 404 rules (unknown, another account's, deleted or expired); 409
   * `transcript_processing` with Retry-After while it runs; 409 `transcript_not_done` when it
   * failed or was canceled and so has no content.
   */
  async export(
    accountId: string,
    id: string,
    format: SubtitleFormat,
    opts: SubtitleOptions,
  ): Promise<string> {
    if (!TRANSCRIPT_ID.test(id)) throw new HarkError('not_found');
    const t = await this.db.transcript.findFirst({
      where: { id, accountId, ...visibleTranscripts() },
      select: {
        status: true,
        speakers: true,
        content: { select: { text: true, words: true, utterances: true } },
      },
    });
    if (!t) throw new HarkError('not_found');
    if (t.status === 'processing') {
      const seconds = await this.retryAfterSeconds(accountId, id);
      const message = 'The transcript is still processing; retry after the time in Retry-After.';
      // Unlike a delete, repeating this request succeeds once the transcript is done.
      throw new HarkError(
        'transcript_processing',
        message,
        undefined,
        { 'Retry-After': String(seconds) },
        true,
      );
    }
    if (t.status !== 'done') throw new HarkError('transcript_not_done');
    // A deletion committing between the reads of the row and of its content: it is gone.
    if (!t.content) throw new HarkError('not_found');
    const content = t.content as unknown as SubtitleContent;
    const diarized = t.speakers !== null && t.speakers !== false;
    return renderSubtitles(format, content, diarized, opts);
  }
}
