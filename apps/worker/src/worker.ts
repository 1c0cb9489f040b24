import type { Db } from '@hark/db';
import { createDiarizer, NeuralDiarizer } from '@hark/diarization';
import { type GuardedClient, createGuardedClient } from '@hark/http';
import { WhisperEngine } from '@hark/media';
import {
  type TranscribeJob,
  createQueues,
  startConsumers,
  transcribeFailedForGood,
  transcriptCancelChannel,
} from '@hark/queue';
import { type BlobStore, createBlobStore } from '@hark/storage';
import { failTranscript, feedAccountNow } from '@hark/transcripts';
import type { Job, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { ActiveJobs } from './active-jobs';
import { announceFinished } from './completion';
import type { WorkerConfig } from './config';
import { WorkerMetrics } from './metrics';
import type { Engine, SpeakerDiarizer } from './pipeline';
import { loadFileLocks } from './scratch/file-lock';
import { ScratchSpace } from './scratch/scratch-space';
import { reconcile } from './sweepers/reconciler.sweeper';
import { sweepRetention } from './sweepers/retention.sweeper';
import { redisSweepCursor } from './sweepers/sweep-cursor';
import { startSweeps } from './sweepers/sweep-scheduler';
import { sweepUploads } from './sweepers/upload.sweeper';
import { type JobOutcome, createTranscribeHandler } from './transcribe.job';

export interface WorkerDeps {
  config: WorkerConfig;
  db: Db;
  /** A `workerConnection` (maxRetriesPerRequest: null). The caller owns it and closes it. */
  redis: Redis;
  logger: Logger;
  /** Default: the store `HARK_STORAGE` names (`createBlobStore`). */
  blobs?: BlobStore;
  /** Default: WhisperEngine from `config.whisper`. */
  engine?: Engine;
  /** Default: per `config.diarizer` (HARK_DIARIZER), models loaded on first use. */
  diarizer?: SpeakerDiarizer & { close?(): Promise<void> };
  /** Default: a guarded got client (`allowPrivate` from ALLOW_PRIVATE_URLS). */
  http?: GuardedClient;
  /** Default: a fresh WorkerMetrics (its own registry); main.ts serves it on HARK_METRICS_PORT. */
  metrics?: WorkerMetrics;
  /** Limits the reconciler to one account (tests share one database with other suites). */
  reconcileAccountId?: string;
}

export interface RunningWorker {
  worker: Worker<TranscribeJob, JobOutcome>;
  active: ActiveJobs;
  metrics: WorkerMetrics;
  /**
   * Stops taking jobs, lets active ones finish for `graceMs` (default: the configured grace),
   * then hands the rest back to the queue (processes killed, job moved back to `wait`). Closes
   * what it opened; the caller's db and redis stay open.
   */
  close(graceMs?: number): Promise<{ handedBack: number }>;
}

/** Starts consuming `transcribe` jobs: the cancel subscriber first, then the BullMQ worker and the sweeps. */
export async function startWorker(deps: WorkerDeps): Promise<RunningWorker> {
  const { config, db, redis, logger } = deps;
  const blobs = deps.blobs ?? createBlobStore(config);
  const engine = deps.engine ?? new WhisperEngine({ ...config.whisper, tmpDir: config.tmpDir });
  const diarizer =
    deps.diarizer ??
    (config.diarizer.kind === 'neural'
      ? new NeuralDiarizer({ modelsDir: config.diarizer.modelsDir, threads: config.diarizer.threads })
      : createDiarizer());
  const http =
    deps.http ??
    createGuardedClient({ allowPrivate: config.allowPrivateUrls, timeoutMs: config.downloadTimeoutMs });
  const active = new ActiveJobs();
  const metrics =
    deps.metrics ??
    new WorkerMetrics((err) =>
      logger.warn({ err: (err as Error).message }, 'metrics: queue depths unavailable'),
    );

  // One subscriber connection per process; subscribed before any job can start.
  const subscriber = redis.duplicate();
  subscriber.on('error', (err) => logger.warn({ err: err.message }, 'cancel subscriber: redis error'));
  subscriber.on('message', (_channel: string, transcriptId: string) => {
    if (active.cancel(transcriptId)) logger.info({ transcriptId }, 'cancel received; stopping the job');
  });
  await subscriber.subscribe(transcriptCancelChannel(config.redisPrefix));

  const scratch = await sweepScratch(config.tmpDir, logger);
  const queues = createQueues(redis, config.redisPrefix);
  const announce = { redis, redisPrefix: config.redisPrefix, webhooks: queues.webhooks };
  metrics.watchQueues([queues.transcribe.queue, queues.webhooks.queue]);
  /** Fair scheduling: the account's oldest held transcripts enter the queue, up to its share. */
  async function feed(accountId: string): Promise<void> {
    try {
      await queues.transcribe.enqueueMany(await feedAccountNow(db, accountId, config.queuedPerAccount));
    } catch (error) {
      logger.warn(
        { accountId, err: (error as Error).message },
        'could not feed the account; the reconciler will',
      );
    }
  }
  const handler = createTranscribeHandler({
    db,
    active,
    audio: {
      db,
      blobs,
      http,
      maxDownloadBytes: config.maxDownloadBytes,
      copiesUploads: config.storage.driver === 's3',
    },
    pipeline: {
      db,
      engine,
      diarizer,
      maxAudioSeconds: config.maxAudioSeconds,
      wordTimestamps: config.whisper.wordTimestamps,
      speechGate: config.diarizer.speechGate,
      metrics,
    },
    announce,
    scratch,
    scratchBytes: config.jobScratchBytes,
    logger,
    metrics,
    feed,
  });
  const { transcribe: consumer } = await startConsumers(
    'worker',
    {
      transcribe: {
        handler,
        listen(worker) {
          worker.on('stalled', (jobId) => {
            metrics.jobStalled();
            logger.warn({ transcriptId: jobId }, 'job stalled (its worker died); requeued');
          });
          worker.on('completed', (job) => active.recorded(job.data.transcriptId));
          worker.on('failed', (job, err) => {
            if (!job) return;
            active.recorded(job.data.transcriptId);
            void failedForGood(job, err);
          });
        },
      },
    },
    { connection: redis, redisPrefix: config.redisPrefix, tuning: config.queue, logger, handBack: active },
  );

  /**
   * BullMQ can fail a job without running the handler: a job that stalled more than
   * maxStalledCount times (it keeps killing workers) is failed on its next pick-up. The
   * transcript must not stay `processing` with its hold: fail it `engine_failed` here. When the
   * handler already failed it, failTranscript returns false and nothing happens.
   */
  async function failedForGood(job: Job<TranscribeJob>, err: Error): Promise<void> {
    if (!transcribeFailedForGood(job, err)) return;
    const id = job.data.transcriptId;
    try {
      if (await failTranscript(db, id, 'engine_failed', 'Transcription failed after every retry.')) {
        const row = await db.transcript.findUnique({ where: { id }, select: { webhookUrl: true } });
        await announceFinished(announce, id, row?.webhookUrl ?? null);
        logger.warn(
          { transcriptId: id, reason: err.message },
          'job failed outside the handler; transcript failed',
        );
      }
    } catch (error) {
      logger.error(
        { transcriptId: id, err: (error as Error).message },
        'could not fail the transcript of a failed job',
      );
    }
  }

  // The reconciler keeps its own period: turning the retention sweeps off (to keep content)
  // must not leave a transcript whose job was lost processing for ever.
  const reconciler =
    config.reconcileIntervalMs > 0
      ? startSweeps({
          intervalMs: config.reconcileIntervalMs,
          redis,
          redisPrefix: config.redisPrefix,
          log: logger,
          sweeps: [
            {
              name: 'reconcile',
              run: async () => ({
                ...(await reconcile({
                  db,
                  transcribe: queues.transcribe,
                  announce: (id, url) => announceFinished(announce, id, url),
                  stop: async (id) =>
                    void (await redis.publish(transcriptCancelChannel(config.redisPrefix), id)),
                  maxProcessingMs: config.maxProcessingMs,
                  graceMs: config.reconcileGraceMs,
                  queuedPerAccount: config.queuedPerAccount,
                  ...(deps.reconcileAccountId ? { accountId: deps.reconcileAccountId } : {}),
                  log: logger,
                })),
              }),
            },
          ],
        })
      : null;
  if (!reconciler)
    logger.warn(
      'reconciler off (HARK_RECONCILE_INTERVAL_MS=0): transcripts whose job was lost stay processing',
    );
  const sweeps =
    config.sweepIntervalMs > 0
      ? startSweeps({
          intervalMs: config.sweepIntervalMs,
          redis,
          redisPrefix: config.redisPrefix,
          log: logger,
          sweeps: [
            {
              name: 'retention',
              run: async (signal) => ({ ...(await sweepRetention({ db, blobs, log: logger, signal })) }),
            },
            {
              name: 'uploads',
              run: async (signal) => ({
                ...(await sweepUploads({
                  db,
                  blobs,
                  uploadTtlHours: config.uploadTtlHours,
                  orphanCursor: redisSweepCursor(redis, config.redisPrefix, 'orphan-blobs'),
                  log: logger,
                  signal,
                })),
              }),
            },
          ],
        })
      : null;

  return {
    worker: consumer.worker,
    active,
    metrics,
    async close(graceMs = config.shutdownGraceMs) {
      const { handedBack } = await consumer.close({
        graceMs,
        stopped: async () => void (await Promise.all([sweeps?.stop(), reconciler?.stop()])),
      });
      await Promise.allSettled([queues.close(), subscriber.quit(), diarizer.close?.()]);
      return { handedBack };
    },
  };
}

/**
 * The scratch folder, swept before any job starts: what runs that died left there (the caller's
 * audio, decoded WAVs, the engine's output), where no live run on this or another worker sharing
 * the folder holds it (`ScratchSpace`).
 */
async function sweepScratch(tmpDir: string, logger: Logger): Promise<ScratchSpace> {
  const scratch = new ScratchSpace(tmpDir, await loadFileLocks());
  if (!scratch.sweeps) {
    logger.warn({ tmpDir }, 'no file locks on this platform: the scratch folder is not swept');
    return scratch;
  }
  const removed = await scratch.sweep();
  if (removed > 0) logger.info({ tmpDir, removed }, 'scratch: removed what runs that died left');
  return scratch;
}
