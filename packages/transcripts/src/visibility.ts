import type { Transcript } from '@hark/db';

/**
 * Whether a transcript is gone for its caller: deleted, or past its retention and not still
 * processing (a processing one is kept until it ends, then it expires). The row-level form of
 * the API's `visibleTranscripts` filter, for code that has the row already (the dispatcher: no
 * notice for a transcript the API answers 404 for, even before the retention sweep ran).
 */
export function goneForCaller(
  t: Pick<Transcript, 'deletedAt' | 'expiresAt' | 'status'>,
  now: Date = new Date(),
): boolean {
  if (t.deletedAt !== null) return true;
  return t.expiresAt !== null && t.expiresAt.getTime() <= now.getTime() && t.status !== 'processing';
}
