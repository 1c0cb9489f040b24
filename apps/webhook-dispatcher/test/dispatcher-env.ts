import { createHash, createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Db, type WebhookDelivery, createDb } from '@hark/db';
import { type CatalogQueue, type Queues, createQueues, workerConnection } from '@hark/queue';
import { type TestAccount, createProcessingTranscript, createTestAccount } from '@hark/testing';
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
  deliveries(id: string): Promise<WebhookDelivery[]>;
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
      db.webhookDelivery.findMany({ where: { transcriptId: id }, orderBy: { attempt: 'asc' } }),
    async close() {
      await Promise.allSettled(running.splice(0).map((d) => d.close(0)));
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queues.close();
      await Promise.allSettled([db.$disconnect(), redis.quit()]);
    },
  };
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body, exactly as received. */
  body: string;
  at: number;
}

/** An answer, optionally after `delayMs`; `'hang'` never answers. */
export type Reply =
  | { status: number; body?: string; headers?: Record<string, string>; delayMs?: number }
  | 'hang';

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Resolves when `n` requests have arrived. */
  received(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1; `reply(i)` answers the i-th request (0-based). */
export async function startReceiver(
  reply: (i: number, req: ReceivedRequest) => Reply = () => ({ status: 200, body: 'ok' }),
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const i = requests.push(r) - 1;
      for (const w of waiters.filter((x) => requests.length >= x.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      const answer = reply(i, r);
      if (answer === 'hang') return;
      const send = () => res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? '');
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook?team=qa`,
    requests,
    received(n, timeoutMs = 15_000) {
      if (requests.length >= n) return Promise.resolve(requests.slice(0, n));
      return new Promise((resolve, reject) => {
        const t = setTimeout(
          () => reject(new Error(`receiver got ${requests.length} of ${n} requests`)),
          timeoutMs,
        );
        waiters.push({ n, resolve: () => (clearTimeout(t), resolve(requests.slice(0, n))) });
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The receiver's check, written from the spec with node:crypto only (not @hark/webhooks). */
export function signatureValid(req: ReceivedRequest, apiKey: string): { valid: boolean; t: number } {
  const header = String(req.headers['hark-signature'] ?? '');
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!m) return { valid: false, t: 0 };
  const t = Number(m[1]);
  const key = createHash('sha256').update(apiKey).digest('hex');
  const expected = createHmac('sha256', key).update(`${t}.${req.body}`).digest('hex');
  return { valid: expected === m[2], t };
}
