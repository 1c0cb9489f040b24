import { Prisma, type Transcript } from '@hark/db';

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

/**
 * An upload is gone for its caller once one of its transcripts is past its retention: that
 * transcript's erasure (at the next sweep) erases the upload too, and until then a new
 * transcript of it made the expired text again under a fresh retention. SQL, on the upload
 * aliased `u`; `liveUploadWhere` is the Prisma form.
 */
export const NO_EXPIRED_TRANSCRIPT = Prisma.sql`NOT EXISTS (
  SELECT 1 FROM transcripts x
  WHERE x.upload_id = u.id AND x.expires_at <= now() AND x.status <> 'processing')`;

export function liveUploadWhere(now: Date = new Date()) {
  return {
    erasedAt: null,
    transcripts: { none: { expiresAt: { lte: now }, status: { not: 'processing' as const } } },
  };
}
