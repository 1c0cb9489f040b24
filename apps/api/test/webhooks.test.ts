import { randomBytes } from 'node:crypto';
import {
  type CatalogQueue,
  type WebhookProducer,
  catalogQueue,
  webhookJobId,
  webhookProducer,
  workerConnection,
} from '@hark/queue';
import { type Receiver, type TestAccount, signatureValid, startReceiver, waitFor } from '@hark/testing';
import { completeTranscript, failTranscript } from '@hark/transcripts';
// The dispatcher runs in-process: replays are sent by it, never by the API.
import { type RunningDispatcher, loadDispatcherConfig, startDispatcher } from '@hark/webhook-dispatcher';
import { deliveryRecord, teardownFirst } from '@hark/testing/jest';
import express, { type RequestHandler } from 'express';
import type { Redis } from 'ioredis';
import pino from 'pino';
import request from 'supertest';
import { authenticate } from '../src/middleware/auth';
import { errorHandler } from '../src/middleware/errors';
import { requestContext } from '../src/middleware/request-context';
import { webhookRoutes } from '../src/routes/webhook.routes';
import { REPLAYS_IN_FLIGHT_PER_ACCOUNT, WebhookReplayQueue } from '../src/services/webhook-delivery-replay';
import { WebhookDeliveryService } from '../src/services/webhook-delivery.service';
import { apiTest, envelope } from './helpers';

jest.setTimeout(30_000);

const RECORD_KEYS = [
  'id',
  'transcriptId',
  'url',
  'attempt',
  'delivered',
  'statusCode',
  'error',
  'responsePreview',
  'durationMs',
  'manual',
  'createdAt',
];

const api = apiTest({ account: { toppedUp: true, credits: 1000 } });
let dispatcher: RunningDispatcher;
let workerRedis: Redis;
let webhooks: WebhookProducer;
let webhookQueue: CatalogQueue<'webhook'>;
let rx: Receiver;
/** What the receiver answers next, and after how long. */
let status = 200;
let delayMs = 0;

beforeAll(async () => {
  workerRedis = workerConnection(api.deps.config.redisUrl);
  // Three automatic attempts 1 s apart, so a test sees the whole schedule and its end.
  const config = loadDispatcherConfig({
    ...process.env,
    HARK_REDIS_PREFIX: api.deps.config.redisPrefix,
    HARK_WEBHOOK_SCHEDULE_MS: '0,1000,1000',
    HARK_WEBHOOK_TIMEOUT_MS: '2000',
  });
  dispatcher = await startDispatcher({
    config,
    db: api.db,
    redis: workerRedis,
    logger: pino({ level: 'silent' }),
  });
  webhooks = webhookProducer(catalogQueue('webhook', workerRedis, api.deps.config.redisPrefix));
  webhookQueue = webhooks.queue;
  rx = await startReceiver(() => ({ status, body: status === 200 ? 'ok' : 'nope', delayMs }));
});
teardownFirst(api, async () => {
  await dispatcher.close(0);
  await webhookQueue.close();
  await rx.close();
  await workerRedis.quit();
});
beforeEach(() => {
  status = 200;
  delayMs = 0;
});

const create = (body: Record<string, unknown> = { webhookUrl: rx.url }, a: TestAccount = api.account) =>
  api.createTranscript(a, body);

/** The worker's side: the transition, then attempt 1 with its job id (only with a webhookUrl). */
async function finish(id: string, how: 'done' | 'failed' = 'done', announce = true) {
  if (how === 'failed') await failTranscript(api.db, id, 'audio_invalid', 'The audio could not be decoded.');
  else {
    await completeTranscript(api.db, id, {
      durationSeconds: 5,
      language: 'en',
      model: 'whisper-test',
      speakerCount: null,
      content: { text: 'hi', words: [], utterances: [], diarizationSegments: null },
    });
  }
  if (announce) await webhooks.enqueueAttempt(id, 1);
}

const history = async (id: string) =>
  (await request(api.app).get(`/v1/transcripts/${id}/webhook-deliveries`).set(api.auth).expect(200)).body
    .data as Record<string, unknown>[];
const historyOf = (id: string, n: number) =>
  waitFor(async () => ((await history(id)).length >= n ? history(id) : null), { message: `${n} deliveries` });
const replay = (id: string, a: TestAccount = api.account) =>
  request(api.app).post(`/v1/transcripts/${id}/webhook-deliveries`).set(a.auth);

describe('GET /v1/transcripts/{id}/webhook-deliveries', () => {
  it('every attempt, oldest first, with exactly the record fields; [] before any', async () => {
    const id = await create();
    const empty = await request(api.app)
      .get(`/v1/transcripts/${id}/webhook-deliveries`)
      .set(api.auth)
      .expect(200);
    expect(empty.body).toEqual({ data: [] });
    expect(empty.headers['ratelimit-limit']).toBe('1200');

    status = 500;
    await finish(id);
    await historyOf(id, 1);
    status = 200;
    const data = await historyOf(id, 2);
    for (const d of data) expect(Object.keys(d)).toEqual(RECORD_KEYS);
    expect(data).toEqual([
      deliveryRecord({
        transcriptId: id,
        url: rx.url,
        attempt: 1,
        delivered: false,
        statusCode: 500,
        responsePreview: 'nope',
        createdAt: expect.any(String),
      }),
      deliveryRecord({
        transcriptId: id,
        url: rx.url,
        attempt: 2,
        delivered: true,
        statusCode: 200,
        responsePreview: 'ok',
        createdAt: expect.any(String),
      }),
    ]);
    expect(Date.parse(data[1]!.createdAt as string)).toBeGreaterThan(
      Date.parse(data[0]!.createdAt as string),
    );
  });
});

describe('POST /v1/transcripts/{id}/webhook-deliveries (replay)', () => {
  it('sent at once by the dispatcher: 201, manual, continuing the count between automatic attempts, never retried', async () => {
    status = 500;
    const id = await create();
    await finish(id, 'failed');
    await historyOf(id, 1);

    // Automatic attempt 2 is still waiting: the replay takes the next number, the schedule goes on after it.
    const first = await replay(id).expect(201);
    expect(first.headers['ratelimit-limit']).toBe('1200');
    expect(Object.keys(first.body.data)).toEqual(RECORD_KEYS);
    expect(first.body.data).toMatchObject({
      transcriptId: id,
      url: rx.url,
      attempt: 2,
      manual: true,
      delivered: false,
      statusCode: 500,
      responsePreview: 'nope',
    });
    const all = await historyOf(id, 4);
    expect(all.map((d) => [d.attempt, d.manual])).toEqual([
      [1, false],
      [2, true],
      [3, false],
      [4, false],
    ]);
    expect(all[1]).toEqual(first.body.data);
    // Three automatic attempts in all (the failed replay added none), then the schedule ended.
    await waitFor(async () => (await webhookQueue.getJobState(webhookJobId(id, 3))) === 'completed');
    expect(await webhookQueue.getJob(webhookJobId(id, 4))).toBeUndefined();

    status = 200;
    const second = await replay(id).expect(201);
    expect(second.body.data).toMatchObject({
      attempt: 5,
      manual: true,
      delivered: true,
      statusCode: 200,
      error: null,
      responsePreview: 'ok',
    });
    expect((await history(id)).map((d) => d.attempt)).toEqual([1, 2, 3, 4, 5]);

    const sent = rx.requests.filter((r) => r.headers['hark-delivery-id'] === `whd_${id}`);
    expect(sent).toHaveLength(5);
    expect(sent.every((r) => signatureValid(r, api.account.apiKey).valid)).toBe(true);
    expect(JSON.parse(sent[4]!.body)).toMatchObject({
      id,
      status: 'failed',
      error: { code: 'audio_invalid' },
    });
  });

  it('409 no_webhook without webhookUrl, while processing, and for canceled transcripts', async () => {
    const bare = await create({});
    await finish(bare, 'done', false);
    const processing = await create();
    const canceled = await create();
    await request(api.app).post(`/v1/transcripts/${canceled}/cancel`).set(api.auth).expect(200);
    for (const id of [bare, processing, canceled]) {
      const res = await replay(id).expect(409);
      expect(res.body).toEqual(envelope('no_webhook', false));
      expect(await history(id)).toEqual([]);
    }
    expect(rx.requests.filter((r) => [bare, processing, canceled].some((id) => r.body.includes(id)))).toEqual(
      [],
    );
  });

  it('404 not_found on both routes: unknown id, another account, deleted', async () => {
    const id = await create({ webhookUrl: rx.url });
    await finish(id);
    await historyOf(id, 1);
    const other = await api.newAccount();
    const deleted = await create();
    await finish(deleted);
    await historyOf(deleted, 1);
    await request(api.app).delete(`/v1/transcripts/${deleted}`).set(api.auth).expect(200);
    for (const [a, target] of [
      [other, id],
      [api.account, 'tr_unknown'],
      [api.account, deleted],
    ] as const) {
      const get = await request(api.app)
        .get(`/v1/transcripts/${target}/webhook-deliveries`)
        .set(a.auth)
        .expect(404);
      expect(get.body).toEqual(envelope('not_found', false));
      const post = await replay(target, a).expect(404);
      expect(post.body).toEqual(envelope('not_found', false));
    }
  });

  /** The replay route on the test's Redis prefix, waiting `timeoutMs` for the dispatcher. */
  function replayApp(prefix: string, timeoutMs: number) {
    const deps = { ...api.deps, config: { ...api.deps.config, redisPrefix: prefix } };
    const pass: RequestHandler = (_req, _res, next) => next();
    const app = express();
    return app
      .use(requestContext(app, pino({ level: 'silent' }), () => undefined))
      .use(authenticate(deps, async () => undefined))
      .use(
        '/v1',
        webhookRoutes(
          new WebhookDeliveryService(deps.db, new WebhookReplayQueue(deps.redis, prefix, timeoutMs)),
          () => pass,
        ),
      )
      .use(errorHandler);
  }

  it('a send that outlasts the wait is waited for: 201 with its record, never a 500 that invites a second send', async () => {
    // The wait used to end in 500 internal (retryable) while the dispatcher was still sending:
    // the notice went out and was recorded, and a caller who retried sent it again.
    const app = replayApp(api.deps.config.redisPrefix, 300);
    const id = await create();
    await finish(id, 'done', false);
    delayMs = 1000;
    const sent = rx.requests.length;
    const pending = request(app)
      .post(`/v1/transcripts/${id}/webhook-deliveries`)
      .set(api.auth)
      .then((r) => r);
    await rx.received(sent + 1);
    expect(await history(id)).toEqual([]); // its number is taken, its outcome not yet known: not listed
    const res = await pending;
    expect([res.status, res.body.data?.manual, res.body.data?.statusCode]).toEqual([201, true, 200]);
    expect((await history(id)).map((d) => d.id)).toEqual([res.body.data.id]);
  });

  it(`at most ${REPLAYS_IN_FLIGHT_PER_ACCOUNT} replays of an account in flight: more are 429 rate_limited; other accounts are not held`, async () => {
    const id = await create();
    await finish(id, 'done', false);
    const other = await api.newAccount({ toppedUp: true, credits: 100 });
    const theirs = await create({ webhookUrl: rx.url }, other);
    await finish(theirs, 'done', false);
    delayMs = 1500;
    const flood = Array.from({ length: REPLAYS_IN_FLIGHT_PER_ACCOUNT + 2 }, () => replay(id).then((r) => r));
    await new Promise((r) => setTimeout(r, 300));
    const refused = await replay(id);
    expect([refused.status, refused.body.error?.code, refused.headers['retry-after']]).toEqual([
      429,
      'rate_limited',
      '10',
    ]);
    expect(refused.body.error.retryable).toBe(true);
    const started = Date.now();
    const mine = await replay(theirs, other).expect(201);
    expect(mine.body.data.manual).toBe(true);
    const statuses = (await Promise.all(flood)).map((r) => r.status).sort();
    expect(statuses).toEqual([
      ...Array<number>(REPLAYS_IN_FLIGHT_PER_ACCOUNT).fill(201),
      ...Array<number>(2).fill(429),
    ]);
    // The other account's replay waited for its own receiver only (1.5 s), not for the flood.
    expect(Date.now() - started).toBeLessThan(3000);
    // The slots are given back: the account replays again.
    delayMs = 0;
    await replay(id).expect(201);
    expect(await history(id)).toHaveLength(REPLAYS_IN_FLIGHT_PER_ACCOUNT + 1);
  });

  it('no dispatcher answering in time: 500 internal (retryable), and the waiting job is taken back', async () => {
    // Same database, a Redis prefix no dispatcher listens on, a short wait.
    const prefix = `hark-test-${randomBytes(4).toString('hex')}`;
    const app = replayApp(prefix, 300);
    const id = await create();
    await finish(id, 'done', false);
    const res = await request(app).post(`/v1/transcripts/${id}/webhook-deliveries`).set(api.auth).expect(500);
    expect(res.body).toEqual(envelope('internal', true));
    const orphan = catalogQueue('webhook', workerRedis, prefix);
    expect(await orphan.getJobCounts('wait', 'delayed', 'active')).toEqual({
      wait: 0,
      delayed: 0,
      active: 0,
    });
    await orphan.obliterate({ force: true });
    await orphan.close();
    expect(await history(id)).toEqual([]);
  });
});
