import { type Db, Prisma } from '@hark/db';
import type { TranscribeProducer } from '@hark/queue';
import { failTranscript, feedAccountNow } from '@hark/transcripts';
import type { Logger } from 'pino';

export interface ReconcileDeps {
  db: Db;
  transcribe: TranscribeProducer;
  /** Announces a transcript the reconciler failed (wake-ups, webhook). */
  announce(transcriptId: string, webhookUrl: string | null): Promise<void>;
  /** Tells a worker that may still hold the job to stop it. */
  stop(transcriptId: string): Promise<void>;
  /** Older than this (from creation, held time included) and still processing: failed `engine_failed`, hold released. */
  maxProcessingMs: number;
  /** Queued (or created) more recently than this is left alone: its producer enqueues just after its commit. */
  graceMs: number;
  /** Jobs an account may have waiting in the queue (fair scheduling, `feedAccount`). */
  queuedPerAccount: number;
  now?: Date;
  /** Limits the pass to one account (tests share one database with other suites). */
  accountId?: string;
  /** Told about each transcript acted on. */
  log?: Logger;
}

export interface ReconcileResult {
  /** Queued transcripts whose job was gone, enqueued again. */
  requeued: number;
  /** Past the maximum processing time, failed. */
  expired: number;
  /** Held transcripts put in the queue by feeding their accounts. */
  fed: number;
}

/**
 * Finds transcripts `processing` that would otherwise never finish, and fixes them:
 * - queued (`queued_at` set) without a live job (Redis flushed or restarted without
 *   persistence, a crash between a feed's commit and its enqueue): enqueued again;
 * - held in Postgres (`queued_at` null) while their account has room in the queue (a feed that
 *   never ran: a worker died between starting a job and feeding): their accounts are fed;
 * - past the maximum processing time, counted from creation: failed `engine_failed`.
 * Safe in every replica at once: the job id is the transcript id (a second add collapses), feeds
 * serialise on the account lock, and failing goes through the locked transition.
 */
export async function reconcile(deps: ReconcileDeps): Promise<ReconcileResult> {
  const now = deps.now ?? new Date();
  const graceCutoff = new Date(now.getTime() - deps.graceMs);
  const account = deps.accountId ? { accountId: deps.accountId } : {};
  const rows = await deps.db.transcript.findMany({
    where: {
      status: 'processing',
      OR: [
        { createdAt: { lt: new Date(now.getTime() - deps.maxProcessingMs) } },
        { queuedAt: { lt: graceCutoff } },
      ],
      ...account,
    },
    select: { id: true, createdAt: true, queuedAt: true, webhookUrl: true },
    orderBy: { createdAt: 'asc' },
    take: 1000,
  });
  const result: ReconcileResult = { requeued: 0, expired: 0, fed: 0 };
  for (const t of rows) {
    if (now.getTime() - t.createdAt.getTime() > deps.maxProcessingMs) {
      if (
        await failTranscript(
          deps.db,
          t.id,
          'engine_failed',
          'Transcription did not finish within the time allowed.',
        )
      ) {
        result.expired++;
        deps.log?.warn(
          { transcriptId: t.id },
          'reconciler: processing past the maximum time; failed engine_failed',
        );
        await deps.stop(t.id);
        await deps.announce(t.id, t.webhookUrl);
      }
      continue;
    }
    if (t.queuedAt === null) continue; // held: fed below
    const job = await deps.transcribe.queue.getJob(t.id);
    const state = job ? await job.getState() : 'missing';
    if (state === 'missing' || state === 'unknown' || state === 'completed' || state === 'failed') {
      // A finished job with a processing row means its result never reached Postgres.
      if (job) await job.remove().catch(() => undefined);
      await deps.transcribe.enqueue(t.id);
      result.requeued++;
      deps.log?.warn(
        { transcriptId: t.id, jobState: state },
        'reconciler: processing without a live job; enqueued again',
      );
    }
  }
  // Accounts with transcripts held longer than the grace period (transcripts_held_idx).
  const held = await deps.db.$queryRaw<{ account_id: string }[]>`
    SELECT DISTINCT account_id FROM transcripts
    WHERE status = 'processing' AND queued_at IS NULL AND created_at < ${graceCutoff}
      ${deps.accountId ? Prisma.sql`AND account_id = ${deps.accountId}` : Prisma.empty}
    LIMIT 1000`;
  for (const { account_id: accountId } of held) {
    const ids = await feedAccountNow(deps.db, accountId, deps.queuedPerAccount);
    await deps.transcribe.enqueueMany(ids);
    result.fed += ids.length;
    if (ids.length)
      deps.log?.info({ accountId, transcriptIds: ids }, 'reconciler: fed held transcripts into the queue');
  }
  return result;
}
