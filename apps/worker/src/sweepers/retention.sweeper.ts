import { type Db, Prisma } from '@hark/db';
import { type BlobStore, isBlobStoreUnavailable } from '@hark/storage';
import { eraseTranscript, uploadStillRead } from '@hark/transcripts';
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
  /** Aborted when the round is abandoned (its time ran out, the worker is stopping). */
  signal?: AbortSignal;
}

export interface RetentionSweepResult {
  /** Transcripts whose content was erased. */
  expired: number;
  /** Upload files removed with them. */
  filesRemoved: number;
  /** Idempotency records past their 24 hours, deleted. */
  idempotencyPurged: number;
}

// Bounds one sweep; whatever is left waits for the next one.
const MAX_BATCHES = 50;

/**
 * Erases transcripts whose retention has passed (`expiresAt`), so they read like deleted ones:
 * in one transaction `eraseTranscript` removes the content row and the caller's data on the row
 * and its delivery records, sets `deletedAt` and marks the upload erased; the upload's file is
 * removed after the commit. A crash in between leaves an erased upload with its file, which
 * `sweepUploads` removes later. The usage record stays.
 *
 * Transcripts still `processing` are never touched (they expire once they end). Another
 * transcript of the same upload still processing does not delay the erasure, only the removal
 * of the file it reads: `sweepUploads` removes that once no processing transcript reads it.
 *
 * The same pass deletes idempotency records past their expiry (`purgeIdempotencyRecords`).
 */
export async function sweepRetention(deps: SweepDeps): Promise<RetentionSweepResult> {
  const { db, blobs, signal } = deps;
  const now = (deps.now ?? (() => new Date()))();
  const batchSize = deps.batchSize ?? 100;
  const result: RetentionSweepResult = { expired: 0, filesRemoved: 0, idempotencyPurged: 0 };
  // Once the store proved unavailable, the rest of the round erases without trying it again
  // (each try would wait out the client's time-outs): sweepUploads removes those blobs later.
  let storeDown = false;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    signal?.throwIfAborted();
    const due = await db.$queryRaw<{ id: string }[]>`
      SELECT t.id FROM transcripts t
      WHERE t.expires_at <= ${now} AND t.deleted_at IS NULL AND t.status <> 'processing'
      ORDER BY t.expires_at LIMIT ${batchSize}`;
    let erasedThisBatch = 0;
    for (const { id } of due) {
      const erased = await eraseExpired(db, id, now);
      if (!erased) continue;
      erasedThisBatch++;
      deps.log?.info({ transcriptId: id }, 'retention passed; content erased');
      // Its bytes stay while another transcript of the upload still reads them: sweepUploads
      // removes them once none does.
      if (!storeDown && erased.uploadId && !(await uploadStillRead(db, erased.uploadId))) {
        // A store that fails here leaves the blob of an erased upload: sweepUploads retries it.
        const removed = await blobs.remove(erased.uploadId, signal ? { signal } : {}).then(
          () => true,
          (err: unknown) => {
            signal?.throwIfAborted();
            storeDown = isBlobStoreUnavailable(err);
            deps.log?.warn({ err: (err as Error).message, uploadId: erased.uploadId }, 'blob removal failed');
            return false;
          },
        );
        if (removed) result.filesRemoved++;
      }
    }
    result.expired += erasedThisBatch;
    if (due.length < batchSize || erasedThisBatch === 0) break;
  }
  result.idempotencyPurged = await purgeIdempotencyRecords(db, now, batchSize * 10);
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
    return { uploadId: await eraseTranscript(tx, id, row.upload_id, now) };
  });
}

/**
 * Deletes idempotency records past `expires_at` (decisions: keys are kept 24 hours), those of
 * POST /v1/transcripts and of POST /v1/uploads, each table in batches of `batchSize` (their
 * `expires_at` indexes). A create that finds its key expired deletes that record itself, so
 * racing one is harmless. Resolves with the records deleted.
 */
export async function purgeIdempotencyRecords(db: Db, now: Date, batchSize = 1000): Promise<number> {
  let purged = 0;
  for (const table of ['idempotency_records', 'upload_idempotency_records']) {
    const t = Prisma.raw(table);
    for (let batch = 0; batch < MAX_BATCHES; batch++) {
      const n = await db.$executeRaw`
        DELETE FROM ${t} WHERE ctid IN (SELECT ctid FROM ${t} WHERE expires_at < ${now} LIMIT ${batchSize})`;
      purged += n;
      if (n < batchSize) break;
    }
  }
  return purged;
}
