import {
  TRANSCRIBE_JOB_OPTIONS,
  WEBHOOK_JOB_OPTIONS,
  WEBHOOK_REPLAY_JOB_OPTIONS,
  bullPrefix,
  isLastTranscribeAttempt,
  replayJobId,
  transcribeFailedForGood,
  transcribeJobId,
  transcriptIdOfWebhookJob,
  webhookJobId,
} from './catalog';
import { type ConsumerOptions, type Handler, assertConsumes, startConsumers } from './consumer';
import type { Queues } from './producers';
import {
  delayBefore,
  infraRetryDelay,
  isLastWebhookAttempt,
  webhookInfraRetry,
  webhookSchedule,
} from './webhook-retry';

// Redis keys and stored job options of running deployments depend on these values: a change
// here is a migration, not a refactor.
describe('job catalog', () => {
  it('keeps the job ids: transcript id, <transcript>-attempt-<n>, whd_ for a replay', () => {
    expect(transcribeJobId('tr_abc')).toBe('tr_abc');
    expect(webhookJobId('tr_abc', 3)).toBe('tr_abc-attempt-3');
    expect(transcriptIdOfWebhookJob(webhookJobId('tr_a-b', 11))).toBe('tr_a-b');
    expect(replayJobId()).toMatch(/^whd_[\w-]+$/);
    expect(transcriptIdOfWebhookJob(replayJobId())).toBeUndefined();
    expect(bullPrefix('hark')).toBe('hark:bull');
  });

  it('keeps the job options', () => {
    expect(TRANSCRIBE_JOB_OPTIONS).toEqual({
      attempts: 3,
      backoff: { type: 'exponential', delay: 5_000 },
      removeOnComplete: { age: 3600, count: 1000 },
      removeOnFail: { age: 86_400 },
    });
    expect(WEBHOOK_JOB_OPTIONS).toEqual({
      attempts: 1,
      removeOnComplete: { age: 86_400 },
      removeOnFail: { age: 604_800 },
    });
    expect(WEBHOOK_REPLAY_JOB_OPTIONS).toEqual({
      attempts: 1,
      lifo: true,
      removeOnComplete: { age: 3600 },
      removeOnFail: { age: 86_400 },
    });
  });

  it('a transcribe run is the last when it is attempt `attempts`', () => {
    const job = (attemptsMade: number, attempts?: number) => ({ attemptsMade, opts: { attempts } });
    expect([0, 1, 2].map((made) => isLastTranscribeAttempt(job(made, 3)))).toEqual([false, false, true]);
    expect(isLastTranscribeAttempt(job(0))).toBe(true);
    // After a failure BullMQ has counted it: the job is over once every attempt is made.
    const err = new Error('boom');
    expect([1, 2, 3].map((made) => transcribeFailedForGood(job(made, 3), err))).toEqual([false, false, true]);
    const unrecoverable = Object.assign(new Error('bad audio'), { name: 'UnrecoverableError' });
    expect(transcribeFailedForGood(job(1, 3), unrecoverable)).toBe(true);
  });

  it('a webhook attempt is the last when the schedule has no next one', () => {
    const decided = { delaysMs: webhookSchedule.delaysMs, timeScale: 1 };
    expect([1, 10, 11].map((a) => isLastWebhookAttempt(decided, a))).toEqual([false, false, true]);
    const configured = { delaysMs: [0, 100, 250], timeScale: 2 };
    expect([1, 2, 3].map((a) => isLastWebhookAttempt(configured, a))).toEqual([false, false, true]);
    expect([1, 2, 3, 4].map((a) => delayBefore(configured, a))).toEqual([0, 200, 500, null]);
  });

  it('puts an automatic attempt back 12 times on infrastructure failures, 1 s doubling to 60 s', () => {
    const waits = Array.from({ length: 13 }, (_, i) => infraRetryDelay(i + 1));
    expect(waits).toEqual([
      1000,
      2000,
      4000,
      8000,
      16_000,
      32_000,
      60_000,
      60_000,
      60_000,
      60_000,
      60_000,
      60_000,
      null,
    ]);
    expect(webhookInfraRetry.maxRetries).toBe(12);
    // 423 s of waiting in all.
    expect(waits.reduce<number>((a, b) => a + (b ?? 0), 0)).toBe(423_000);
  });

  it('refuses a process that leaves one of its queues unconsumed or takes another’s', () => {
    expect(() => assertConsumes('worker', ['transcribe'])).not.toThrow();
    expect(() => assertConsumes('dispatcher', ['webhook'])).not.toThrow();
    expect(() => assertConsumes('worker', [])).toThrow('worker has no consumer for transcribe');
    expect(() => assertConsumes('worker', ['transcribe', 'webhook'])).toThrow(
      'worker must not consume webhook',
    );
  });
});

describe('typed from the catalog', () => {
  it('refuses a wrong payload or a handler of another queue at compile time', () => {
    const unchecked = (queues: Queues) => {
      // @ts-expect-error an attempt is a number
      void queues.webhooks.enqueueAttempt('tr_a', '1');
      const webhook: Handler<'webhook'> = async () => ({ status: 'skipped', reason: 'gone' });
      const options = {} as ConsumerOptions;
      // @ts-expect-error the worker must consume transcribe: its handler is missing
      void startConsumers('worker', {}, options);
      // @ts-expect-error a webhook handler does not take transcribe jobs
      void startConsumers('worker', { transcribe: { handler: webhook } }, options);
      const own = { transcribe: { handler: async () => 'done' as const } };
      // @ts-expect-error the webhook queue is the dispatcher's
      void startConsumers('worker', { ...own, webhook: { handler: webhook } }, options);
      void startConsumers('dispatcher', { webhook: { handler: webhook } }, options);
    };
    expect(unchecked).toBeInstanceOf(Function);
  });
});
