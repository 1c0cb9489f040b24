import type { Db, Prisma } from '@hark/db';

/**
 * Uploads no processing transcript was made from. One made from it reads, or will read, its
 * bytes: erasing the upload (its other transcript deleted or expired) stops every new use of it
 * but not that one, so its bytes stay until no such transcript is left; removing them earlier
 * failed a transcript for the deletion of another.
 */
export const UNREAD_UPLOADS = {
  transcripts: { none: { status: 'processing' } },
} as const satisfies Prisma.UploadWhereInput;

/** Whether a processing transcript still reads the upload's bytes (see `UNREAD_UPLOADS`). */
export async function uploadStillRead(db: Db | Prisma.TransactionClient, uploadId: string): Promise<boolean> {
  return (await db.transcript.count({ where: { uploadId, status: 'processing' } })) > 0;
}
