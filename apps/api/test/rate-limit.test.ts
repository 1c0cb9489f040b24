import request from 'supertest';
import { SlidingWindowLimiter } from '../src/middleware/rate-limit';
import { apiTest, envelope, startTestApi } from './helpers';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const api = apiTest({ config: { otherRouteLimit: { max: 3, windowSeconds: 2 } }, account: {} });

describe('sliding-window rate limits', () => {
  it('counts down, then 429 rate_limited with Retry-After; refused requests do not count', async () => {
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(api.app).get('/v1/balance').set(api.auth).expect(200);
      expect(res.headers['ratelimit-limit']).toBe('3');
      remaining.push(res.headers['ratelimit-remaining'] as string);
    }
    expect(remaining).toEqual(['2', '1', '0']);
    const refused = await request(api.app).get('/v1/balance').set(api.auth).expect(429);
    expect(refused.body).toEqual(envelope('rate_limited', true));
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(2);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    // Another route has its own window.
    await request(api.app).get('/v1/limits').set(api.auth).expect(200);
    // Once the window slides past the first requests, slots open again (refusals added nothing).
    await sleep(2100);
    await request(api.app).get('/v1/balance').set(api.auth).expect(200);
  });

  it('refuses a burst straddling a fixed-window boundary', async () => {
    const other = await api.newAccount();
    // Start just before an even second, so a fixed 2 s window would reset between the bursts.
    const now = Date.now();
    await sleep(2000 - (now % 2000) + 1400);
    for (let i = 0; i < 3; i++) await request(api.app).get('/v1/balance').set(other.auth).expect(200);
    await sleep(800); // crosses the fixed boundary; still inside the sliding 2 s window
    const res = await request(api.app).get('/v1/balance').set(other.auth);
    expect(res.status).toBe(429);
  });

  it('limits are per account', async () => {
    const a = await api.newAccount();
    const b = await api.newAccount();
    for (let i = 0; i < 3; i++) await request(api.app).get('/v1/balance').set(a.auth).expect(200);
    await request(api.app).get('/v1/balance').set(a.auth).expect(429);
    await request(api.app).get('/v1/balance').set(b.auth).expect(200);
  });

  it('hits decided in one script run behave as if sent one by one, each subject on its own', async () => {
    const limiter = new SlidingWindowLimiter(api.redis, `${api.deps.config.redisPrefix}-batch-${Date.now()}`);
    const burst = await Promise.all([
      ...Array.from({ length: 5 }, () => limiter.hit('acct:x', 'GET /v1/balance', 3, 2)),
      limiter.hit('acct:y', 'GET /v1/balance', 3, 2),
      limiter.hit('acct:x', 'GET /v1/limits', 3, 2),
    ]);
    expect(burst.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
      [false, 0],
      [true, 2],
      [true, 2],
    ]);
    expect(burst[3]!.resetSeconds).toBeGreaterThanOrEqual(1);
    expect(burst[3]!.resetSeconds).toBeLessThanOrEqual(2);
  });

  it('concurrent requests past the limit: exactly the limit succeeds', async () => {
    const d = await api.newAccount();
    const res = await Promise.all(
      Array.from({ length: 7 }, () => request(api.app).get('/v1/balance').set(d.auth)),
    );
    expect(res.map((r) => r.status).sort()).toEqual([200, 200, 200, 429, 429, 429, 429]);
    expect(
      res
        .filter((r) => r.status === 200)
        .map((r) => r.headers['ratelimit-remaining'])
        .sort(),
    ).toEqual(['0', '1', '2']);
  });

  it('replicas share the window (two apps, one Redis)', async () => {
    const twin = startTestApi({
      otherRouteLimit: { max: 3, windowSeconds: 2 },
      redisPrefix: api.deps.config.redisPrefix,
    });
    try {
      const c = await api.newAccount();
      await request(api.app).get('/v1/balance').set(c.auth).expect(200);
      await request(twin.app).get('/v1/balance').set(c.auth).expect(200);
      await request(api.app).get('/v1/balance').set(c.auth).expect(200);
      await request(twin.app).get('/v1/balance').set(c.auth).expect(429);
    } finally {
      await twin.close({ sharedPrefix: true });
    }
  });
});
