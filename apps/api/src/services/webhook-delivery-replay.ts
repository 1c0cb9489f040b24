import { randomUUID } from 'node:crypto';
import { HarkError } from '@hark/core';
import {
  QUEUES,
  type WebhookJob,
  type WebhookJobResult,
  type WebhookProducer,
  catalogQueue,
  webhookProducer,
} from '@hark/queue';
import { type Job, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';

/** How long a replay request waits for the dispatcher to take its job and send it. */
export const REPLAY_TIMEOUT_MS = 15_000;
/** How much longer it waits for a send already under way (the dispatcher's own limit is 10 s). */
export const REPLAY_SENDING_MS = 20_000;
/**
 * Replays one account may have in flight. The dispatcher's sends are shared by every account
 * (50 at once), and a replay goes ahead of automatic attempts: without a cap, one account
 * replaying to a receiver that hangs held every account's notices back (a healthy replay took
 * 7.9 s instead of 0.03 s, an automatic attempt 1 went out 18 s late).
 */
export const REPLAYS_IN_FLIGHT_PER_ACCOUNT = 3;
/** A slot left behind by an API that died mid-replay frees itself after this. */
const SLOT_TTL_MS = 2 * (REPLAY_TIMEOUT_MS + REPLAY_SENDING_MS);
/** What a refused replay's `Retry-After` says: about one send's time. */
const REPLAY_RETRY_AFTER_SECONDS = 10;

/** Takes a slot (ARGV: max, ttl ms, member) in the account's set of replays in flight, or none. */
const TAKE_SLOT = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

/**
 * Hands a replay to the dispatcher (the API never sends webhooks) and waits for its result.
 *
 * The wait listens on BullMQ's queue events, which needs a blocking Redis connection. One is
 * opened on the first replay in flight and closed when the last one ends, so an idle API holds
 * none and nothing outlives the app. It starts reading the event stream from the last event
 * present before any of its jobs was added, so no completion can slip past it.
 *
 * A caller told to retry must not have caused a send: when no dispatcher took the job in time,
 * the job is taken back before the error; once a dispatcher holds it, the send is waited for.
 */
export class WebhookReplayQueue {
  private readonly webhooks: WebhookProducer;
  private events: Promise<QueueEvents> | null = null;
  private users = 0;

  constructor(
    private readonly redis: Redis,
    private readonly redisPrefix: string,
    private readonly timeoutMs = REPLAY_TIMEOUT_MS,
    private readonly sendingMs = REPLAY_SENDING_MS,
  ) {
    this.webhooks = webhookProducer(catalogQueue('webhook', redis, redisPrefix));
  }

  /**
   * Enqueues one manual attempt for `transcriptId` and returns the dispatcher's result; 429
   * `rate_limited` while the account has `REPLAYS_IN_FLIGHT_PER_ACCOUNT` replays in flight.
   */
  async run(accountId: string, transcriptId: string): Promise<WebhookJobResult> {
    const slot = await this.takeSlot(accountId);
    try {
      const events = await this.acquire();
      try {
        // The job id becomes the delivery record's id, so a re-run of this job cannot record twice.
        const job = await this.webhooks.enqueueReplay(transcriptId);
        return await this.result(job, events, transcriptId);
      } finally {
        this.release();
      }
    } finally {
      await this.redis.zrem(this.slotsKey(accountId), slot).catch(() => undefined);
    }
  }

  private async result(
    job: Job<WebhookJob, WebhookJobResult>,
    events: QueueEvents,
    transcriptId: string,
  ): Promise<WebhookJobResult> {
    try {
      return await job.waitUntilFinished(events, this.timeoutMs);
    } catch (error) {
      const state = await job.getState().catch(() => 'unknown');
      // Still waiting for a dispatcher: taken back, nothing was sent, the caller may retry.
      // Removing a job a dispatcher holds is refused: then its send is under way.
      const takenBack =
        (state === 'waiting' || state === 'prioritized' || state === 'delayed') &&
        (await job.remove().then(
          () => true,
          () => false,
        ));
      if (takenBack || state === 'failed') {
        throw new Error(`replay of ${transcriptId} did not finish: ${(error as Error).message}`, {
          cause: error,
        });
      }
      try {
        return await job.waitUntilFinished(events, this.sendingMs);
      } catch (late) {
        throw new Error(
          `replay of ${transcriptId} was taken but did not finish: ${(late as Error).message}`,
          {
            cause: late,
          },
        );
      }
    }
  }

  private slotsKey(accountId: string): string {
    return `${this.redisPrefix}:replays-in-flight:${accountId}`;
  }

  private async takeSlot(accountId: string): Promise<string> {
    const slot = randomUUID();
    const taken = await this.redis.eval(
      TAKE_SLOT,
      1,
      this.slotsKey(accountId),
      REPLAYS_IN_FLIGHT_PER_ACCOUNT,
      SLOT_TTL_MS,
      slot,
    );
    if (taken !== 1) {
      throw new HarkError(
        'rate_limited',
        `At most ${REPLAYS_IN_FLIGHT_PER_ACCOUNT} replays of an account are sent at once; retry when one has ended.`,
        undefined,
        { 'Retry-After': String(REPLAY_RETRY_AFTER_SECONDS) },
      );
    }
    return slot;
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
