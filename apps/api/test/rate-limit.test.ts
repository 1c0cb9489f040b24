import request from 'supertest';
import { createTestAccount, type TestAccount } from '@hark/testing';
import { envelope, startTestApi, type TestApi } from './helpers';

let api: TestApi;
let acct: TestAccount;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  api = startTestApi({ otherRouteLimit: { max: 3, windowSeconds: 2 } });
  acct = await createTestAccount(api.db, api.deps.config.secret);
});
afterAll(() => api.close());

describe('sliding-window rate limits', () => {
  it('counts down, then 429 rate_limited with Retry-After; refused requests do not count', async () => {
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(api.app).get('/v1/balance').set(acct.auth).expect(200);
      expect(res.headers['ratelimit-limit']).toBe('3');
      remaining.push(res.headers['ratelimit-remaining'] as string);
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const refused = await request(api.app).get('/v1/balance').set(acct.auth).expect(429);
    expect(refused.body).toEqual(envelope('rate_limited', true));
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(2);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    // Another route has its own window.
    await request(api.app).get('/v1/limits').set(acct.auth).expect(200);
    // Once the window slides past the first requests, slots open again (refusals added nothing).
    await sleep(2100);
    await request(api.app).get('/v1/balance').set(acct.auth).expect(200);
  });

  it('refuses a burst straddling a fixed-window boundary', async () => {
    const other = await createTestAccount(api.db, api.deps.config.secret);
    // Start just before an even second, so a fixed 2 s window would reset between the bursts.
    const now = Date.now();
    await sleep(2000 - (now % 2000) + 1400);
    for (let i = 0; i < 3; i++) await request(api.app).get('/v1/balance').set(other.auth).expect(200);
    await sleep(800); // crosses the fixed boundary; still inside the sliding 2 s window
    const res = await request(api.app).get('/v1/balance').set(other.auth);
    expect(res.status).toBe(429);
  });

  it('limits are per account', async () => {
    const a = await createTestAccount(api.db, api.deps.config.secret);
    const b = await createTestAccount(api.db, api.deps.config.secret);
    for (let i = 0; i < 3; i++) await request(api.app).get('/v1/balance').set(a.auth).expect(200);
    await request(api.app).get('/v1/balance').set(a.auth).expect(429);
    await request(api.app).get('/v1/balance').set(b.auth).expect(200);
  });

  it('replicas share the window (two apps, one Redis)', async () => {
    const twin = startTestApi({ otherRouteLimit: { max: 3, windowSeconds: 2 }, redisPrefix: api.deps.config.redisPrefix });
    try {
      const c = await createTestAccount(api.db, api.deps.config.secret);
      await request(api.app).get('/v1/balance').set(c.auth).expect(200);
      await request(twin.app).get('/v1/balance').set(c.auth).expect(200);
      await request(api.app).get('/v1/balance').set(c.auth).expect(200);
      await request(twin.app).get('/v1/balance').set(c.auth).expect(429);
    } finally {
      await twin.db.$disconnect();
      await twin.redis.quit();
    }
  });
});
