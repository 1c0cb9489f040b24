import { isIdOf } from '@hark/core';
import type { Db } from '@hark/db';
import { isBlobStoreUnavailable } from '@hark/storage';
import { DIGESTS_TO_FORGET, ERASED_UNREAD_UPLOAD, forgetUploadDigests } from '@hark/transcripts';
import type { SweepDeps } from './retention.sweeper';
import type { SweepCursor } from './sweep-cursor';

export interface UploadSweepDeps extends SweepDeps {
  /** Uploads untouched for longer than this and unused (no transcript, or only failed and canceled ones) are removed. */
  uploadTtlHours: number;
  /** Where the orphan sweep's listing resumes (see `sweepOrphanBlobs`). */
  orphanCursor: SweepCursor;
}

export interface UploadSweepResult {
  /** Unused uploads removed (row and file). */
  removed: number;
  /**
   * Erased uploads whose blobs were removed and marked so (`blobsRemovedAt`): each once, after
   * its erasure settled and once no processing transcript reads it. The erasure removes them at
   * once as well; this is the pass that is sure (a crash in between, a store that was down, an
   * append that was still writing).
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
 * An erased upload's blobs are removed for good this long after its erasure: past any append
 * that was still writing then (a chunk's request lasts at most Node's 300 s request time-out,
 * and the store's calls their own time-outs) and any process that died between the erasure and
 * its own removal of them.
 */
const ERASED_SETTLE_MS = 3600_000;

/**
 * Removes uploads that nobody transcribed within the TTL (counted from their last chunk), the
 * blobs and digests that erased uploads left behind (once no processing transcript reads them),
 * and blobs no upload row names. Each part does a bounded amount of work per run and marks or
 * pages past what it did, so the next run carries on instead of starting over.
 */
export async function sweepUploads(deps: UploadSweepDeps): Promise<UploadSweepResult> {
  const now = (deps.now ?? (() => new Date()))();
  const batchSize = deps.batchSize ?? 100;
  const { signal } = deps;
  const cutoff = new Date(now.getTime() - deps.uploadTtlHours * 3600_000);
  const result: UploadSweepResult = {
    removed: 0,
    erasedFilesRemoved: 0,
    digestsForgotten: 0,
    orphansRemoved: 0,
  };

  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    signal?.throwIfAborted();
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

  result.erasedFilesRemoved = await removeErasedBlobs(deps, new Date(now.getTime() - ERASED_SETTLE_MS), now);
  // Not bounded by the settling time (few erased rows have any left, but the first sweep after
  // an upgrade finds those of every upload erased before): in batches, as above.
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    signal?.throwIfAborted();
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
  result.orphansRemoved = await sweepOrphanBlobs({
    db: deps.db,
    blobs: deps.blobs,
    before: cutoff,
    cursor: deps.orphanCursor,
    ...(signal ? { signal } : {}),
  });
  return result;
}

/**
 * Erased uploads erased before `settled`, not cleared yet and read by no processing transcript:
 * their blobs are removed and the rows marked (`blobs_removed_at`), a batch at a time, in the
 * order of their erasure; the next run starts after the last one marked. One that fails for a
 * reason of its own is logged and passed over (this run); a store that is unavailable ends the
 * run. Resolves with the uploads cleared.
 */
async function removeErasedBlobs(deps: UploadSweepDeps, settled: Date, now: Date): Promise<number> {
  const batchSize = deps.batchSize ?? 100;
  const { signal } = deps;
  let after = { erasedAt: new Date(0), id: '' };
  let cleared = 0;
  for (let batch = 0; batch < MAX_BATCHES; batch++) {
    signal?.throwIfAborted();
    const due = await deps.db.$queryRaw<{ id: string; erased_at: Date }[]>`
      SELECT u.id, u.erased_at FROM uploads u
      WHERE u.erased_at IS NOT NULL AND u.blobs_removed_at IS NULL AND u.erased_at < ${settled}
        AND (u.erased_at, u.id) > (${after.erasedAt}, ${after.id})
        -- UNREAD_UPLOADS (@hark/transcripts), here with the keyset the Prisma query cannot hold.
        AND NOT EXISTS (SELECT 1 FROM transcripts t WHERE t.upload_id = u.id AND t.status = 'processing')
      ORDER BY u.erased_at, u.id LIMIT ${batchSize}`;
    const done: string[] = [];
    for (const { id } of due) {
      try {
        await deps.blobs.remove(id, signal ? { signal } : {});
        done.push(id);
      } catch (err) {
        if (signal?.aborted || isBlobStoreUnavailable(err)) {
          await markCleared(deps.db, done, now);
          throw err;
        }
        deps.log?.warn({ uploadId: id, err: (err as Error).message }, 'erased upload: blob removal failed');
      }
    }
    cleared += await markCleared(deps.db, done, now);
    const last = due.at(-1);
    if (!last || due.length < batchSize) break;
    after = { erasedAt: last.erased_at, id: last.id };
  }
  return cleared;
}

async function markCleared(db: Db, ids: string[], now: Date): Promise<number> {
  if (ids.length === 0) return 0;
  const { count } = await db.upload.updateMany({
    where: { id: { in: ids }, blobsRemovedAt: null },
    data: { blobsRemovedAt: now },
  });
  return count;
}

/** Names listed per page of the store's listing. */
const ORPHAN_PAGE = 500;
/** Pages one orphan sweep lists at most (listing calls: the cost when nothing is to be removed). */
const MAX_ORPHAN_PAGES = 20;
/** Once this many were removed, the sweep stops after the page at hand. */
const MAX_ORPHANS_REMOVED = 500;

/**
 * Removes what the store holds for keys no upload row names, last written before `before`: the
 * body of a POST whose row was never created (the API died, or the store failed during the
 * clean-up), and with the S3 driver the multipart upload such a body started, which S3 would
 * otherwise keep (and bill) forever. Only names of the shape Hark gives uploads (`up_` and 20
 * characters): anything else under the prefix is not Hark's to judge.
 *
 * The listing resumes from `cursor` and goes on for a bounded number of pages, or until a bounded
 * number of orphans were removed, keeping the cursor after each page; at its end the next run
 * starts over. So however many retained uploads come first, the orphans after them are reached,
 * and only removals count against the bound. Resolves with the keys removed.
 */
export async function sweepOrphanBlobs(deps: {
  db: Db;
  blobs: UploadSweepDeps['blobs'];
  before: Date;
  cursor: SweepCursor;
  signal?: AbortSignal;
  /** Names a page (tests). Default 500. */
  pageSize?: number;
  /** Pages a run (tests). Default 20. */
  maxPages?: number;
}): Promise<number> {
  const { signal } = deps;
  let cursor = await deps.cursor.get();
  // A key is listed once per thing stored under it (its object or remainder, its upload).
  const removed = new Set<string>();
  const maxPages = deps.maxPages ?? MAX_ORPHAN_PAGES;
  for (let page = 0; page < maxPages && removed.size < MAX_ORPHANS_REMOVED; page++) {
    signal?.throwIfAborted();
    const listed = await deps.blobs.staleKeys(deps.before, {
      cursor,
      limit: deps.pageSize ?? ORPHAN_PAGE,
      ...(signal ? { signal } : {}),
    });
    const ids = [...new Set(listed.keys.filter((k) => isIdOf('up', k) && !removed.has(k)))];
    if (ids.length > 0) {
      const rows = await deps.db.upload.findMany({ where: { id: { in: ids } }, select: { id: true } });
      const known = new Set(rows.map((r) => r.id));
      for (const id of ids) {
        if (known.has(id)) continue;
        // A row created since the query above names a blob written after `before`: a POST writes
        // its body first and creates the row at once, and `before` is the upload TTL ago.
        await deps.blobs.remove(id, signal ? { signal } : {});
        removed.add(id);
      }
    }
    cursor = listed.next;
    await deps.cursor.set(cursor);
    if (cursor === null) break;
  }
  return removed.size;
}

/**
 * The row is locked while the file goes, so a transcript created for this upload meanwhile
 * waits for us (its foreign key needs the row) and then finds it gone, instead of pointing at
 * a file that no longer exists. A crash after the file removal leaves the row, removed next time.
 */
async function removeUnused(
  deps: { db: Db; blobs: UploadSweepDeps['blobs']; signal?: AbortSignal },
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
    await deps.blobs.remove(id, deps.signal ? { signal: deps.signal } : {});
    // Failed or canceled transcripts still name it: the row stays, erased, as after a deletion
    // (its blobs are removed once more when the erasure has settled: a chunk may have been
    // arriving, which the row lock does not stop).
    if ((await tx.transcript.count({ where: { uploadId: id } })) > 0) {
      await tx.upload.update({ where: { id }, data: { erasedAt: new Date(), ...ERASED_UNREAD_UPLOAD } });
    } else {
      await tx.upload.delete({ where: { id } });
    }
    return true;
  });
}
