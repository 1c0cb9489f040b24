import { type Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  type JobPayloads,
  type JobResults,
  QUEUES,
  type QueueName,
  TRANSCRIBE_JOB_OPTIONS,
  WEBHOOK_JOB_OPTIONS,
  WEBHOOK_REPLAY_JOB_OPTIONS,
  type WebhookJob,
  type WebhookJobResult,
  bullPrefix,
  replayJobId,
  transcribeJobId,
  webhookJobId,
} from './catalog';

/** A queue of the catalog, typed by its payload and result. */
export type CatalogQueue<N extends QueueName> = Queue<JobPayloads[N], JobResults[N]>;

/** Producer of `transcribe` jobs. Only for transcripts `feedAccount` marked queued (or re-queued). */
export interface TranscribeProducer {
  /** For reads (job state, cancel, metrics, the board); add jobs through the methods below. */
  readonly queue: CatalogQueue<'transcribe'>;
  /** Adds one transcribe job, jobId = transcript id (a repeat collapses). */
  enqueue(transcriptId: string): Promise<void>;
  /**
   * Adds transcribe jobs in the order given, jobId = transcript id, in one round trip: the
   * fair scheduling in @hark/transcripts decides what enters the queue and in what order.
   */
  enqueueMany(transcriptIds: readonly string[]): Promise<void>;
}

/** Producer of `webhook` jobs: automatic attempts and replays. */
export interface WebhookProducer {
  readonly queue: CatalogQueue<'webhook'>;
  /**
   * Adds automatic attempt `attempt` (1-based) for a transcript, jobId
   * `<transcript>-attempt-<n>` (repeats collapse while the first job is kept), after `delayMs`
   * when given.
   */
  enqueueAttempt(transcriptId: string, attempt: number, delayMs?: number): Promise<void>;
  /** Adds a replay (sent once, ahead of waiting attempts); its job id is a fresh delivery id. */
  enqueueReplay(transcriptId: string): Promise<Job<WebhookJob, WebhookJobResult>>;
}

export interface Queues {
  transcribe: TranscribeProducer;
  webhooks: WebhookProducer;
  close(): Promise<void>;
}

/** The catalog's queue `name` on `connection`, under the deployment's Redis prefix. */
export function catalogQueue<N extends QueueName>(
  name: N,
  connection: Redis,
  redisPrefix: string,
): CatalogQueue<N> {
  return new Queue<JobPayloads[N], JobResults[N]>(name, { connection, prefix: bullPrefix(redisPrefix) });
}

/** The transcribe producer on `queue` (the API builds its own, without the webhook queue). */
export function transcribeProducer(queue: CatalogQueue<'transcribe'>): TranscribeProducer {
  return {
    queue,
    async enqueue(transcriptId) {
      await queue.add(
        QUEUES.transcribe,
        { transcriptId },
        { ...TRANSCRIBE_JOB_OPTIONS, jobId: transcribeJobId(transcriptId) },
      );
    },
    async enqueueMany(transcriptIds) {
      if (transcriptIds.length === 0) return;
      await queue.addBulk(
        transcriptIds.map((transcriptId) => ({
          name: QUEUES.transcribe,
          data: { transcriptId },
          opts: { ...TRANSCRIBE_JOB_OPTIONS, jobId: transcribeJobId(transcriptId) },
        })),
      );
    },
  };
}

/** The webhook producer on `queue`. */
export function webhookProducer(queue: CatalogQueue<'webhook'>): WebhookProducer {
  return {
    queue,
    async enqueueAttempt(transcriptId, attempt, delayMs) {
      const jobId = webhookJobId(transcriptId, attempt);
      const delay = delayMs === undefined ? {} : { delay: delayMs };
      await queue.add(QUEUES.webhook, { transcriptId, attempt }, { ...WEBHOOK_JOB_OPTIONS, jobId, ...delay });
    },
    enqueueReplay(transcriptId) {
      return queue.add(
        QUEUES.webhook,
        { transcriptId, attempt: 0, manual: true },
        { ...WEBHOOK_REPLAY_JOB_OPTIONS, jobId: replayJobId() },
      );
    },
  };
}

/**
 * Typed producers for every queue of the catalog on `redis` (a producer connection in the API,
 * the process's connection in a worker), under `<redisPrefix>:bull`. `close` closes the queues,
 * not the connection.
 */
export function createQueues(redis: Redis, redisPrefix: string): Queues {
  const transcribe = transcribeProducer(catalogQueue('transcribe', redis, redisPrefix));
  const webhooks = webhookProducer(catalogQueue('webhook', redis, redisPrefix));
  return {
    transcribe,
    webhooks,
    async close() {
      await Promise.allSettled([transcribe.queue.close(), webhooks.queue.close()]);
    },
  };
}
