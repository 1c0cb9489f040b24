import type { Db } from '@hark/db';
import { type GuardedClient, createGuardedClient } from '@hark/http';
import {
  type WebhookJob,
  type WebhookJobResult,
  createQueues,
  startConsumers,
  transcriptIdOfWebhookJob,
} from '@hark/queue';
import { WEBHOOK_USER_AGENT } from '@hark/webhooks';
import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { DispatcherConfig } from './config';
import { createDeliverHandler } from './deliver.job';
import { DeliveryStore } from './delivery-store';
import { DispatcherMetrics } from './metrics';
import { loadNotice } from './notice';

export interface DispatcherDeps {
  config: DispatcherConfig;
  db: Db;
  /** A `workerConnection` (maxRetriesPerRequest: null). The caller owns it and closes it. */
  redis: Redis;
  logger: Logger;
  /** Default: a guarded got client, `allowPrivate` from ALLOW_PRIVATE_URLS, no redirects. */
  client?: GuardedClient;
  /** Default: a DeliveryStore on `db`. Tests wrap it to inject failures. */
  store?: DeliveryStore;
  /** Default: a fresh DispatcherMetrics (its own registry); main.ts serves it on HARK_METRICS_PORT. */
  metrics?: DispatcherMetrics;
}

export interface RunningDispatcher {
  worker: Worker<WebhookJob, WebhookJobResult>;
  metrics: DispatcherMetrics;
  /**
   * Takes no more jobs and lets in-flight sends finish and be recorded (up to `graceMs`,
   * default the configured grace; past it the rest are abandoned and re-run by another
   * dispatcher: at most a duplicate). The caller's db and redis stay open.
   */
  close(graceMs?: number): Promise<{ finished: boolean }>;
}

/** Starts consuming the `webhook` queue. */
export async function startDispatcher(deps: DispatcherDeps): Promise<RunningDispatcher> {
  const { config, db, redis, logger } = deps;
  const client =
    deps.client ??
    createGuardedClient({
      allowPrivate: config.allowPrivateUrls,
      // postJson cuts each send at config.timeoutMs itself; this is only got's backstop.
      timeoutMs: config.timeoutMs + 1000,
      followRedirects: false,
      userAgent: WEBHOOK_USER_AGENT,
    });
  const queues = createQueues(redis, config.redisPrefix);
  const metrics = deps.metrics ?? new DispatcherMetrics();
  const handler = createDeliverHandler({
    store: deps.store ?? new DeliveryStore(db),
    loadNotice: (id) => loadNotice(db, config.secret, id),
    client,
    timeoutMs: config.timeoutMs,
    schedule: config.schedule,
    enqueueAttempt: (transcriptId, attempt, delayMs) =>
      queues.webhooks.enqueueAttempt(transcriptId, attempt, delayMs),
    logger,
    metrics,
  });
  const { webhook: consumer } = await startConsumers(
    'dispatcher',
    {
      webhook: {
        handler,
        listen(worker) {
          worker.on('stalled', (jobId) =>
            logger.warn(
              { jobId, transcriptId: transcriptIdOfWebhookJob(jobId) },
              'attempt stalled (its dispatcher died); re-running',
            ),
          );
          worker.on('failed', (job, err) =>
            logger.error(
              { jobId: job?.id, transcriptId: job?.data.transcriptId, err: err.message },
              'attempt failed',
            ),
          );
        },
      },
    },
    { connection: redis, redisPrefix: config.redisPrefix, tuning: config.queue, logger },
  );

  return {
    worker: consumer.worker,
    metrics,
    async close(graceMs = config.shutdownGraceMs) {
      const { finished } = await consumer.close({ graceMs });
      await queues.close();
      return { finished };
    },
  };
}
