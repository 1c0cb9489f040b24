import type { Db, Prisma } from '@hark/db';

/**
 * Whether a transcript still processing was made from the upload: a worker reads, or will read,
 * its bytes. Erasing the upload (its other transcript deleted or expired) stops every new use of
 * it but not this one, so its bytes stay until no such transcript is left; removing them earlier
 * failed a transcript for the deletion of another.
 */
export async function uploadStillRead(db: Db | Prisma.TransactionClient, uploadId: string): Promise<boolean> {
  return (await db.transcript.count({ where: { uploadId, status: 'processing' } })) > 0;
}
