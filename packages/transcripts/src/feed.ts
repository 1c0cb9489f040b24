import { lockAccount } from '@hark/billing';
import type { Db, Prisma } from '@hark/db';

type Tx = Prisma.TransactionClient;

/**
 * Fair scheduling across accounts. BullMQ's `transcribe` queue is first come, first served, so
 * an account that queued 40 jobs would hold every other account's next job behind them. Instead
 * an account has at most `maxWaiting` jobs *waiting* in the queue (queued, not yet started);
 * the rest stay `processing` in Postgres with `queued_at` null ("held"). Whenever a waiting job
 * starts (or one ends, is canceled, or is created) the account is fed: its oldest held
 * transcripts are marked queued up to `maxWaiting` and enqueued after the commit. Another
 * account's new job thus waits behind at most `maxWaiting` jobs per busy account, while a
 * lone account still keeps every worker busy (a worker that takes its job feeds the next one).
 *
 * Must run in a transaction that holds the account row lock (`lockAccount`): that serialises
 * the feeds of one account, so the count below sees the other feeders' commits. Held rows
 * locked by someone else are skipped, never waited for: a cancel or failure locks the
 * transcript row and then the account, the reverse of our order, and waiting would deadlock.
 *
 * Returns the transcripts it marked, oldest first; the caller enqueues them after its commit
 * (jobId = transcript id, so a repeat collapses). A crash in between leaves them queued without
 * a job, which the reconciler re-enqueues.
 */
export async function feedAccount(tx: Tx, accountId: string, maxWaiting: number): Promise<string[]> {
  const rows = await tx.$queryRaw<{ id: string; created_at: Date }[]>`
    WITH pick AS (
      SELECT id FROM transcripts
      WHERE account_id = ${accountId} AND status = 'processing' AND queued_at IS NULL
      ORDER BY created_at, id
      LIMIT GREATEST(0, ${maxWaiting}::int - (
        SELECT count(*)::int FROM transcripts
        WHERE account_id = ${accountId} AND status = 'processing'
          AND queued_at IS NOT NULL AND started_at IS NULL))
      FOR UPDATE SKIP LOCKED
    )
    UPDATE transcripts t SET queued_at = now() FROM pick WHERE t.id = pick.id
    RETURNING t.id, t.created_at`;
  return rows
    .sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : 1))
    .map((r) => r.id);
}

/** `feedAccount` in a transaction of its own (worker, reconciler, cancel). */
export function feedAccountNow(db: Db, accountId: string, maxWaiting: number): Promise<string[]> {
  return db.$transaction(async (tx) => {
    await lockAccount(tx, accountId);
    return feedAccount(tx, accountId, maxWaiting);
  });
}

/**
 * The worker's "job started" mark: `started_at` (the job no longer counts as waiting) and the
 * attempt count; `queued_at` too when a job was put in the queue by hand (tests, tooling), so
 * the feed never picks a running transcript. Returns the account, or null when the transcript
 * is no longer processing.
 */
export async function markStarted(db: Db, id: string): Promise<{ accountId: string } | null> {
  const rows = await db.$queryRaw<{ account_id: string }[]>`
    UPDATE transcripts SET started_at = now(), worker_attempts = worker_attempts + 1,
      queued_at = COALESCE(queued_at, now())
    WHERE id = ${id} AND status = 'processing'
    RETURNING account_id`;
  const row = rows[0];
  return row ? { accountId: row.account_id } : null;
}
