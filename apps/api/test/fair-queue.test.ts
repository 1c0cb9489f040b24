import { type CatalogQueue, catalogQueue } from '@hark/queue';
import { type TestAccount, checkAccountInvariants } from '@hark/testing';
import { teardownFirst } from '@hark/testing/jest';
import request from 'supertest';
import { apiTest } from './helpers';

// The API's side of fair scheduling: a create enters the queue only while its account has no
// job waiting there (HARK_QUEUED_PER_ACCOUNT, default 1); the others are held in Postgres.
const api = apiTest();
let queue: CatalogQueue<'transcribe'>;
beforeAll(() => {
  queue = catalogQueue('transcribe', api.redis, api.deps.config.redisPrefix);
});
teardownFirst(api, () => queue.close());

const account = () => api.newAccount({ toppedUp: true, credits: 1000 });

async function create(acct: TestAccount): Promise<string> {
  const res = await request(api.app)
    .post('/v1/transcripts')
    .set(acct.auth)
    .send({ url: 'https://example.com/a.wav' })
    .expect(201);
  expect(res.body.data.status).toBe('processing');
  return res.body.data.id as string;
}

const jobState = async (id: string) => (await queue.getJob(id))?.getState() ?? 'missing';
const queuedAt = async (id: string) =>
  (await api.db.transcript.findUniqueOrThrow({ where: { id }, select: { queuedAt: true } })).queuedAt;

describe('fair scheduling at create and cancel', () => {
  it("one job per account waits in the queue; the account's others are held until it starts or is canceled", async () => {
    const a = await account();
    const b = await account();
    const [a1, a2, a3] = [await create(a), await create(a), await create(a)];
    const b1 = await create(b);
    expect(await Promise.all([a1, a2, a3, b1].map(jobState))).toEqual([
      'waiting',
      'missing',
      'missing',
      'waiting',
    ]);
    expect(await queuedAt(a1)).not.toBeNull();
    expect(await queuedAt(a2)).toBeNull();
    // B's job is right behind A's one waiting job, not behind all of A's.
    const waiting = (await queue.getWaiting()).map((j) => j.id);
    expect(waiting.indexOf(b1)).toBe(waiting.indexOf(a1) + 1);

    // Canceling a held transcript works like any cancel: hold released, nothing enqueued.
    const held = await request(api.app).post(`/v1/transcripts/${a3}/cancel`).set(a.auth).expect(200);
    expect(held.body.data.status).toBe('canceled');
    expect(await jobState(a3)).toBe('missing');
    // Canceling the waiting one gives its place to the next held one.
    await request(api.app).post(`/v1/transcripts/${a1}/cancel`).set(a.auth).expect(200);
    expect(await jobState(a1)).toBe('missing');
    expect(await jobState(a2)).toBe('waiting');
    expect(await checkAccountInvariants(api.db, a.accountId)).toEqual([]);
    await request(api.app).post(`/v1/transcripts/${a2}/cancel`).set(a.auth).expect(200);
    await request(api.app).post(`/v1/transcripts/${b1}/cancel`).set(b.auth).expect(200);
  });
});
