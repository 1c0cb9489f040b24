import { randomBytes } from 'node:crypto';
import { type Db, type WebhookDelivery, createDb } from '@hark/db';
import { type CatalogQueue, type Queues, createQueues, workerConnection } from '@hark/queue';
import {
  type Receiver,
  type Reply,
  type TestAccount,
  createProcessingTranscript,
  createTestAccount,
  startReceiver,
} from '@hark/testing';
import { type HarnessFixture, dispatcherTest as dispatcherFixture } from '@hark/testing/jest';
import { completeTranscript, failTranscript } from '@hark/transcripts';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { type DispatcherConfig, loadDispatcherConfig } from '../src/config';
import { type DispatcherDeps, type RunningDispatcher, startDispatcher } from '../src/dispatcher';

/** Environment of one test file's dispatchers: real Postgres and Redis, its own Redis prefix. */
export function dispatcherEnv(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: process.env.DATABASE_URL!,
    REDIS_URL: process.env.REDIS_URL!,
    HARK_SECRET: process.env.HARK_SECRET!,
    HARK_REDIS_PREFIX: `hark-dtest-${randomBytes(4).toString('hex')}`,
    ALLOW_PRIVATE_URLS: 'true',
    ...overrides,
  };
}

export interface Harness {
  env: Record<string, string>;
  config: DispatcherConfig;
  db: Db;
  redis: Redis;
  queues: Queues;
  queue: CatalogQueue<'webhook'>;
  account: TestAccount;
  /** An in-process dispatcher; `env` overrides this harness's environment for it. */
  start(env?: Record<string, string>, deps?: Partial<DispatcherDeps>): Promise<RunningDispatcher>;
  /** A processing transcript as the API creates it (hold placed). */
  transcript(webhookUrl: string | null): Promise<string>;
  /** What the worker does at completion: the transition, then (unless told not to) attempt 1 with its job id. */
  finish(id: string, how?: 'done' | 'failed', announce?: boolean): Promise<void>;
  /** Closes the dispatchers started so far. */
  stopDispatchers(): Promise<void>;
  enqueueAttempt(id: string, attempt: number): Promise<void>;
  /** Its finished delivery records (as the API lists them), in attempt order. */
  deliveries(id: string): Promise<WebhookDelivery[]>;
  /** A webhook receiver (`startReceiver`), closed by `closeReceivers` or at the end. */
  receiver(reply?: (i: number) => Reply): Promise<Receiver>;
  closeReceivers(): Promise<void>;
  close(): Promise<void>;
}

export async function createHarness(overrides: Record<string, string> = {}): Promise<Harness> {
  const env = dispatcherEnv(overrides);
  const config = loadDispatcherConfig(env);
  const db = createDb({ databaseUrl: config.databaseUrl, poolSize: 6 });
  const redis = workerConnection(config.redisUrl);
  const queues = createQueues(redis, config.redisPrefix);
  const queue = queues.webhooks.queue;
  const account = await createTestAccount(db, config.secret, { toppedUp: true, credits: 1000 });
  const running: RunningDispatcher[] = [];
  const receivers: Receiver[] = [];
  const closeReceivers = async () => {
    await Promise.allSettled(receivers.splice(0).map((r) => r.close()));
  };
  const logger = pino({ level: process.env.LOG_LEVEL ?? 'silent' });

  const enqueueAttempt = (id: string, attempt: number) => queues.webhooks.enqueueAttempt(id, attempt);
  return {
    env,
    config,
    db,
    redis,
    queues,
    queue,
    account,
    async start(extra = {}, deps = {}) {
      const d = await startDispatcher({
        config: loadDispatcherConfig({ ...env, ...extra }),
        db,
        redis,
        logger,
        ...deps,
      });
      running.push(d);
      return d;
    },
    async transcript(webhookUrl) {
      return createProcessingTranscript(db, account, {
        url: 'https://example.com/a.wav',
        webhookUrl,
        externalId: 'ext-1',
        metadata: { team: 'qa' },
      });
    },
    async finish(id, how = 'done', announce = true) {
      if (how === 'done') {
        await completeTranscript(db, id, {
          durationSeconds: 12,
          language: 'en',
          model: 'whisper-test',
          speakerCount: null,
          content: {
            text: 'secret words',
            words: [{ start: 0, end: 1, text: 'secret', speaker: null }],
            utterances: [],
            diarizationSegments: null,
          },
        });
      } else {
        await failTranscript(db, id, 'audio_invalid', 'The audio could not be decoded.');
      }
      if (announce) await enqueueAttempt(id, 1);
    },
    async stopDispatchers() {
      await Promise.allSettled(running.splice(0).map((d) => d.close(0)));
    },
    enqueueAttempt,
    deliveries: (id) =>
      db.webhookDelivery.findMany({
        where: { transcriptId: id, pending: false },
        orderBy: { attempt: 'asc' },
      }),
    async receiver(reply) {
      const r = await startReceiver(reply);
      receivers.push(r);
      return r;
    },
    closeReceivers,
    async close() {
      await Promise.allSettled(running.splice(0).map((d) => d.close(0)));
      await closeReceivers();
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queues.close();
      await Promise.allSettled([db.$disconnect(), redis.quit()]);
    },
  };
}

/**
 * `createHarness(overrides)` for the block it is called in (`@hark/testing/jest`
 * `dispatcherTest`): built before its tests, closed after (with its dispatchers, in process or
 * built, and receivers).
 */
export function dispatcherTest(overrides: Record<string, string> = {}): HarnessFixture<Harness> {
  return dispatcherFixture(() => createHarness(overrides));
}

// The webhook receiver lives in @hark/testing (the API's tests use it too).
export {
  type ReceivedRequest,
  type Receiver,
  type Reply,
  signatureValid,
  startReceiver,
} from '@hark/testing';
