import { type Db, Prisma } from '@hark/db';
import type { BlobStore } from '@hark/storage';
import type { Logger } from 'pino';

export interface SweepDeps {
  db: Db;
  blobs: BlobStore;
  /** Clock for tests. Default: the current time. */
  now?: () => Date;
  /** Rows per query. Default 100. */
  batchSize?: number;
  /** Told about each transcript erased. */
  log?: Logger;
}

export interface RetentionSweepResult {
  /** Transcripts whose content was erased. */
  expired: number;
  /** Upload files removed with them. */
  filesRemoved: number;
}

// Bounds one sweep; whatever is left waits for the next one.
const MAX_BATCHES = 50;

/**
 * Erases the content of transcripts whose retention has passed (`expiresAt`), so they read like
 * deleted ones: in one transaction the content row goes, `deletedAt` is set and the upload is
 * marked erased; the upload's file is removed after the commit. A crash in between leaves an
 * erased upload with its file, which `sweepUploads` removes later. The usage record stays.
 *
 * Transcripts still `processing` are never touched, nor one whose upload a processing
 * transcript is still reading (it expires on a later sweep).
 */
export async function sweepRetention(deps: SweepDeps): Promise<RetentionSweepResult> {
  const { db, blobs } = deps;
  const now = (deps.now ?? (() => new Date()))();
  const batchSize = deps.batchSize ?? 100;
  const result: RetentionSweepResult = { expired: 0, filesRemoved: 0 };
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const due = await db.$queryRaw<{ id: string }[]>`
      SELECT t.id FROM transcripts t
      WHERE t.expires_at <= ${now} AND t.deleted_at IS NULL AND t.status <> 'processing'
        AND NOT EXISTS (
          SELECT 1 FROM transcripts o WHERE o.upload_id = t.upload_id AND o.status = 'processing')
      ORDER BY t.expires_at LIMIT ${batchSize}`;
    let erasedThisBatch = 0;
    for (const { id } of due) {
      const erased = await eraseExpired(db, id, now);
      if (!erased) continue;
      erasedThisBatch++;
      deps.log?.info({ transcriptId: id }, 'retention passed; content erased');
      if (erased.uploadId) {
        // A store that fails here leaves the blob of an erased upload: sweepUploads retries it.
        const removed = await blobs.remove(erased.uploadId).then(
          () => true,
          (err: unknown) => (
            deps.log?.warn({ err: (err as Error).message, uploadId: erased.uploadId }, 'blob removal failed'),
            false
          ),
        );
        if (removed) result.filesRemoved++;
      }
    }
    result.expired += erasedThisBatch;
    if (due.length < batchSize || erasedThisBatch === 0) break;
  }
  return result;
}

/** One transcript, re-checked under its row lock (a concurrent delete or sweep may have won). */
async function eraseExpired(db: Db, id: string, now: Date): Promise<{ uploadId: string | null } | null> {
  return db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ upload_id: string | null }[]>`
      SELECT upload_id FROM transcripts
      WHERE id = ${id} AND deleted_at IS NULL AND status <> 'processing' AND expires_at <= ${now}
      FOR UPDATE`;
    const row = rows[0];
    if (!row) return null;
    await tx.transcriptContent.deleteMany({ where: { transcriptId: id } });
    // The glossary is caller content too (the API's delete clears it the same way).
    await tx.transcript.update({ where: { id }, data: { deletedAt: now, glossary: Prisma.DbNull } });
    if (row.upload_id) {
      await tx.upload.updateMany({
        where: { id: row.upload_id, erasedAt: null },
        data: { erasedAt: now, hashState: null },
      });
    }
    return { uploadId: row.upload_id };
  });
}
