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

/**
 * What an erased upload keeps of its audio once no transcript reads it: nothing. Its declared and
 * computed SHA-256 are fingerprints of the audio (whoever holds a copy of a file could confirm it
 * was sent), so they go with the bytes. For an erasure that knows no transcript reads the upload
 * (its transcripts all failed or were canceled, or none was made); otherwise see
 * `forgetUploadDigests`. The row stays where transcripts still name it.
 */
export const ERASED_UNREAD_UPLOAD = { hashState: null, sha256: null, actualSha256: null } as const;

/** Erased uploads that still hold a digest and that no processing transcript reads. */
export const DIGESTS_TO_FORGET = {
  erasedAt: { not: null },
  OR: [{ sha256: { not: null } }, { actualSha256: { not: null } }],
  ...UNREAD_UPLOADS,
} as const satisfies Prisma.UploadWhereInput;

/**
 * Drops the digests of those of `uploadIds` that are erased and that no processing transcript
 * reads (one still processing checks its bytes against the declared digest). One statement, so
 * a transcript that reads the upload is seen or has not been made: a create locks the upload row
 * and refuses it once erased. Resolves with the uploads changed.
 */
export async function forgetUploadDigests(
  db: Db | Prisma.TransactionClient,
  uploadIds: readonly string[],
): Promise<number> {
  const { count } = await db.upload.updateMany({
    where: { id: { in: [...uploadIds] }, ...DIGESTS_TO_FORGET },
    data: { sha256: null, actualSha256: null },
  });
  return count;
}
