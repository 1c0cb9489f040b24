import type { Db } from '@hark/db';
import {
  DIGESTS_TO_FORGET,
  ERASED_UNREAD_UPLOAD,
  forgetUploadDigests,
  UNREAD_UPLOADS,
} from '@hark/transcripts';
import type { SweepDeps } from './retention.sweeper';

export interface UploadSweepDeps extends SweepDeps {
  /** Uploads untouched for longer than this and unused (no transcript, or only failed and canceled ones) are removed. */
  uploadTtlHours: number;
}

export interface UploadSweepResult {
  /** Unused uploads removed (row and file). */
  removed: number;
  /**
   * Files of erased uploads removed: a crash had left them after the erasure committed, or a
   * transcript made from the upload was still processing then (it read them).
   */
  erasedFilesRemoved: number;
  /**
   * Erased uploads whose digests were dropped: a transcript made from the upload was still
   * processing at the erasure (it checks its bytes against them), or it was erased by a version
   * that kept them.
   */
  digestsForgotten: number;
  /** Blobs with no upload row removed (see `sweepOrphanBlobs`). */
  orphansRemoved: number;
}

const MAX_BATCHES = 50;
/**
 * Erased uploads are re-checked for a leftover file for this long after their erasure: long
 * enough to outlast any crash and restart, short enough that the check stays cheap.
 */
const ERASED_RECHECK_MS = 7 * 24 * 3600_000;

/**
 * Removes uploads that nobody transcribed within the TTL (counted from their last chunk), and
 * the files and digests that erased uploads left behind (once no processing transcript reads
 * them).
 */
export async function sweepUploads(deps: UploadSweepDeps): Promise<UploadSweepResult> {
  const now = (deps.now ?? (() => new Date()))();
  const batchSize = deps.batchSize ?? 100;
  const cutoff = new Date(now.getTime() - deps.uploadTtlHours * 3600_000);
  const result: UploadSweepResult = {
    removed: 0,
    erasedFilesRemoved: 0,
    digestsForgotten: 0,
    orphansRemoved: 0,
  };

  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    // Unused: never used, or its transcripts all failed or were canceled (`releaseUpload`).
    const stale = await deps.db.$queryRaw<{ id: string }[]>`
      SELECT u.id FROM uploads u
      WHERE u.updated_at < ${cutoff} AND u.used_at IS NULL AND u.erased_at IS NULL
      ORDER BY u.updated_at LIMIT ${batchSize}`;
    let removedThisBatch = 0;
    for (const { id } of stale) if (await removeUnused(deps, id, cutoff)) removedThisBatch++;
    result.removed += removedThisBatch;
    if (stale.length < batchSize || removedThisBatch === 0) break;
  }

  const erased = await deps.db.upload.findMany({
    // Not while a transcript made from it still processes (it reads them): a later sweep.
    where: { erasedAt: { not: null, gt: new Date(now.getTime() - ERASED_RECHECK_MS) }, ...UNREAD_UPLOADS },
    select: { id: true },
  });
  for (const { id } of erased) {
    if (!(await deps.blobs.exists(id))) continue;
    await deps.blobs.remove(id);
    result.erasedFilesRemoved++;
  }
  // Not bounded by the re-check window (few erased rows have any left, but the first sweep after
  // an upgrade finds those of every upload erased before): in batches, as above.
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    const ids = await deps.db.upload.findMany({
      where: DIGESTS_TO_FORGET,
      select: { id: true },
      take: batchSize,
    });
    const forgotten = await forgetUploadDigests(
      deps.db,
      ids.map((u) => u.id),
    );
    result.digestsForgotten += forgotten;
    if (ids.length < batchSize || forgotten === 0) break;
  }
  result.orphansRemoved = await sweepOrphanBlobs({ db: deps.db, blobs: deps.blobs, before: cutoff });
  return result;
}

/** Bounds one orphan sweep; the rest waits for the next. */
const MAX_ORPHAN_KEYS = 1000;

/**
 * Removes what the store holds for keys no upload row names, last written before `before`: the
 * body of a POST whose row was never created (the API died, or the store failed during the
 * clean-up), and with the S3 driver the multipart upload such a body started, which S3 would
 * otherwise keep (and bill) forever. Resolves with the keys removed.
 */
export async function sweepOrphanBlobs(deps: {
  db: Db;
  blobs: UploadSweepDeps['blobs'];
  before: Date;
}): Promise<number> {
  const seen = new Set<string>();
  for await (const key of deps.blobs.staleKeys(deps.before)) {
    seen.add(key);
    if (seen.size >= MAX_ORPHAN_KEYS) break;
  }
  if (seen.size === 0) return 0;
  const rows = await deps.db.upload.findMany({ where: { id: { in: [...seen] } }, select: { id: true } });
  const known = new Set(rows.map((r) => r.id));
  let removed = 0;
  for (const key of seen) {
    if (known.has(key)) continue;
    // A row created since the query above names a blob written after `before`: a POST writes
    // its body first and creates the row at once, and `before` is the upload TTL ago.
    await deps.blobs.remove(key);
    removed++;
  }
  return removed;
}

/**
 * The row is locked while the file goes, so a transcript created for this upload meanwhile
 * waits for us (its foreign key needs the row) and then finds it gone, instead of pointing at
 * a file that no longer exists. A crash after the file removal leaves the row, removed next time.
 */
async function removeUnused(
  deps: { db: Db; blobs: UploadSweepDeps['blobs'] },
  id: string,
  cutoff: Date,
): Promise<boolean> {
  return deps.db.$transaction(async (tx) => {
    // Re-checked under the lock: a create that held the row before us has committed by now,
    // and its trigger set used_at.
    const locked = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM uploads
      WHERE id = ${id} AND updated_at < ${cutoff} AND used_at IS NULL AND erased_at IS NULL FOR UPDATE`;
    if (locked.length === 0) return false;
    await deps.blobs.remove(id);
    // Failed or canceled transcripts still name it: the row stays, erased, as after a deletion.
    if ((await tx.transcript.count({ where: { uploadId: id } })) > 0) {
      await tx.upload.update({ where: { id }, data: { erasedAt: new Date(), ...ERASED_UNREAD_UPLOAD } });
    } else {
      await tx.upload.delete({ where: { id } });
    }
    return true;
  });
}
