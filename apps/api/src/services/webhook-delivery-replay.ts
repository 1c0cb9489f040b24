import {
  QUEUES,
  type WebhookJobResult,
  type WebhookProducer,
  catalogQueue,
  webhookProducer,
} from '@hark/queue';
import { QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';

/** How long a replay request waits for the dispatcher before answering 500 `internal`. */
export const REPLAY_TIMEOUT_MS = 15_000;

/**
 * Hands a replay to the dispatcher (the API never sends webhooks) and waits for its result.
 *
 * The wait listens on BullMQ's queue events, which needs a blocking Redis connection. One is
 * opened on the first replay in flight and closed when the last one ends, so an idle API holds
 * none and nothing outlives the app. It starts reading the event stream from the last event
 * present before any of its jobs was added, so no completion can slip past it.
 */
export class WebhookReplayQueue {
  private readonly webhooks: WebhookProducer;
  private events: Promise<QueueEvents> | null = null;
  private users = 0;

  constructor(
    private readonly redis: Redis,
    redisPrefix: string,
    private readonly timeoutMs = REPLAY_TIMEOUT_MS,
  ) {
    this.webhooks = webhookProducer(catalogQueue('webhook', redis, redisPrefix));
  }

  /** Enqueues one manual attempt for `transcriptId` and returns the dispatcher's result. */
  async run(transcriptId: string): Promise<WebhookJobResult> {
    const events = await this.acquire();
    try {
      // The job id becomes the delivery record's id, so a re-run of this job cannot record twice.
      const job = await this.webhooks.enqueueReplay(transcriptId);
      try {
        return await job.waitUntilFinished(events, this.timeoutMs);
      } catch (error) {
        // No dispatcher took it in time (or it failed): take it back while it is still waiting,
        // so a caller told to retry does not also get a late send. Removing an active job is
        // refused, and that send will simply be recorded.
        await job.remove().catch(() => undefined);
        throw new Error(`replay of ${transcriptId} did not finish: ${(error as Error).message}`, {
          cause: error,
        });
      }
    } finally {
      this.release();
    }
  }

  async close(): Promise<void> {
    const events = this.events;
    this.events = null;
    await Promise.allSettled([this.webhooks.queue.close(), events?.then((e) => e.close())]);
  }

  private async acquire(): Promise<QueueEvents> {
    this.users++;
    this.events ??= this.open();
    try {
      return await this.events;
    } catch (error) {
      this.release();
      throw error;
    }
  }

  private release(): void {
    if (--this.users > 0) return;
    const events = this.events;
    this.events = null;
    void events?.then((e) => e.close()).catch(() => undefined);
  }

  private async open(): Promise<QueueEvents> {
    const last = await this.redis.xrevrange(this.webhooks.queue.keys.events!, '+', '-', 'COUNT', 1);
    const events = new QueueEvents(QUEUES.webhook, {
      connection: {
        ...this.redis.options,
        maxRetriesPerRequest: null,
        enableOfflineQueue: true,
        lazyConnect: false,
      },
      prefix: this.webhooks.queue.opts.prefix,
      lastEventId: last[0]?.[0] ?? '0-0',
    });
    await events.waitUntilReady();
    return events;
  }
}
