import type { Db } from '@hark/db';
import { QUEUES, TRANSCRIBE_JOB_OPTIONS, type TranscribeJob } from '@hark/queue';
import { failTranscript } from '@hark/transcripts';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';

export interface ReconcileDeps {
  db: Db;
  queue: Queue<TranscribeJob>;
  /** Announces a transcript the reconciler failed (wake-ups, webhook). */
  announce(transcriptId: string, webhookUrl: string | null): Promise<void>;
  /** Tells a worker that may still hold the job to stop it. */
  stop(transcriptId: string): Promise<void>;
  /** Older than this and still processing: failed `engine_failed`, hold released. */
  maxProcessingMs: number;
  /** Younger than this is left alone: the API enqueues just after its commit. */
  graceMs: number;
  now?: Date;
  /** Limits the pass to one account (tests share one database with other suites). */
  accountId?: string;
  /** Told about each transcript acted on. */
  log?: Logger;
}

/**
 * Finds transcripts `processing` without a live job (Redis flushed or restarted without
 * persistence, a crash between the API's commit and its enqueue) and enqueues them again, and
 * fails those past the maximum processing time. Safe in every replica at once: the job id is the
 * transcript id (a second add collapses) and failing goes through the locked transition.
 */
export async function reconcile(deps: ReconcileDeps): Promise<{ requeued: number; expired: number }> {
  const now = deps.now ?? new Date();
  const rows = await deps.db.transcript.findMany({
    where: {
      status: 'processing',
      createdAt: { lt: new Date(now.getTime() - deps.graceMs) },
      ...(deps.accountId ? { accountId: deps.accountId } : {}),
    },
    select: { id: true, createdAt: true, webhookUrl: true },
    orderBy: { createdAt: 'asc' },
    take: 1000,
  });
  let requeued = 0;
  let expired = 0;
  for (const t of rows) {
    if (now.getTime() - t.createdAt.getTime() > deps.maxProcessingMs) {
      if (await failTranscript(deps.db, t.id, 'engine_failed', 'Transcription did not finish within the time allowed.')) {
        expired++;
        deps.log?.warn({ transcriptId: t.id }, 'reconciler: processing past the maximum time; failed engine_failed');
        await deps.stop(t.id);
        await deps.announce(t.id, t.webhookUrl);
      }
      continue;
    }
    const job = await deps.queue.getJob(t.id);
    const state = job ? await job.getState() : 'missing';
    if (state === 'missing' || state === 'unknown' || state === 'completed' || state === 'failed') {
      // A finished job with a processing row means its result never reached Postgres.
      if (job) await job.remove().catch(() => undefined);
      await deps.queue.add(QUEUES.transcribe, { transcriptId: t.id }, { ...TRANSCRIBE_JOB_OPTIONS, jobId: t.id });
      requeued++;
      deps.log?.warn({ transcriptId: t.id, jobState: state }, 'reconciler: processing without a live job; enqueued again');
    }
  }
  return { requeued, expired };
}
