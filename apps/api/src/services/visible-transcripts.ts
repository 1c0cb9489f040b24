import type { Prisma } from '@hark/db';

/**
 * The transcripts a caller can still see: not deleted, and not past their retention. The
 * retention sweep erases an expired transcript's content on its next run (a minute or so later;
 * never one still processing, which it waits for), but the caller must find it gone from the
 * moment `expiresAt` passes (decisions: "after deletion or retention expiry a transcript is gone
 * for the caller"). OR, not NOT: `expires_at` is null for transcripts kept forever, and SQL's
 * NOT of a comparison with null would drop them too.
 */
export function visibleTranscripts(now: Date = new Date()): Prisma.TranscriptWhereInput {
  return {
    deletedAt: null,
    OR: [{ expiresAt: null }, { expiresAt: { gt: now } }, { status: 'processing' }],
  };
}
