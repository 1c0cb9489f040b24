import request from 'supertest';
import { topUp } from '@hark/billing';
import type { PgPool } from '@hark/db';
import { BalanceService } from '../src/services/balance.service';
import { apiTest, REQUEST_ID, envelope, startTestApi } from './helpers';

const api = apiTest({ account: { credits: '12.5' } });

describe('envelope and request id', () => {
  it('success: {data} with X-Request-Id and rate-limit headers', async () => {
    const res = await request(api.app).get('/v1/balance').set(api.auth).expect(200);
    expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
    expect(res.body).toEqual({ data: { currency: 'USD', total: 12.5, reserved: 0, available: 12.5 } });
    expect(res.headers['ratelimit-limit']).toBe('1200');
    expect(Number(res.headers['ratelimit-remaining'])).toBeLessThan(1200);
    expect(res.headers['ratelimit-reset']).toMatch(/^\d+$/);
  });

  it('a request sent the moment an app starts is answered, not failed for want of Redis', async () => {
    const fresh = startTestApi();
    try {
      const res = await request(fresh.app).get('/v1/balance');
      expect([res.status, res.body]).toEqual([401, envelope('invalid_api_key', false)]);
      expect(res.headers['ratelimit-limit']).toBeDefined();
      expect(fresh.redis.options.enableOfflineQueue).toBe(false); // fails fast from then on
    } finally {
      await fresh.close();
    }
  });

  it('unknown route under /v1: 404 not_found envelope, id in header and body agree', async () => {
    const res = await request(api.app).get('/v1/nope').set(api.auth).expect(404);
    expect(res.body).toEqual(envelope('not_found', false));
    expect(res.body.error.requestId).toBe(res.headers['x-request-id']);
    expect(res.headers['ratelimit-limit']).toBeDefined();
  });

  it('unknown route outside /v1: 404 envelope', async () => {
    const res = await request(api.app).get('/nowhere').expect(404);
    expect(res.body).toEqual(envelope('not_found', false));
    expect(res.headers['x-request-id']).toMatch(REQUEST_ID);
  });

  it('unexpected error (Postgres unreachable): 500 internal, retryable, no stack trace', async () => {
    const broken = startTestApi({ databaseUrl: 'postgresql://hark@127.0.0.1:1/none' });
    try {
      const res = await request(broken.app).get('/v1/balance').set(api.auth).expect(500);
      expect(res.body).toEqual(envelope('internal', true));
      expect(JSON.stringify(res.body)).not.toMatch(/at \w+ \(|ECONNREFUSED|127\.0\.0\.1/);
    } finally {
      await broken.close();
    }
  });
});

describe('health', () => {
  it('/healthz is up and /readyz sees Postgres and Redis', async () => {
    await request(api.app).get('/healthz').expect(200);
    const res = await request(api.app).get('/readyz').expect(200);
    expect(res.body.data).toEqual({ status: 'ready', postgres: true, redis: true });
  });

  it('/readyz is 503 when Postgres is unreachable', async () => {
    const broken = startTestApi({ databaseUrl: 'postgresql://hark@127.0.0.1:1/none' });
    try {
      const res = await request(broken.app).get('/readyz').expect(503);
      expect(res.body.data).toMatchObject({ postgres: false, redis: true });
    } finally {
      await broken.close();
    }
  });
});

describe('balance and limits', () => {
  it('reads made together go out as one query, each answered with its own account', async () => {
    const accounts = await Promise.all(['1.25', '2.5', '7'].map((credits) => api.newAccount({ credits })));
    let queries = 0;
    const counting = {
      query: (...args: Parameters<PgPool['query']>) => {
        queries++;
        return api.deps.pool.query(...args);
      },
    } as unknown as PgPool;
    const balances = new BalanceService(counting);
    const ids = [accounts[2]!, accounts[0]!, accounts[1]!, accounts[0]!].map((a) => a.accountId);
    const views = await Promise.all([
      ...ids.map((id) => balances.get(id)),
      balances.get('acct_missing').catch((e: Error) => e),
    ]);
    expect(queries).toBe(1);
    expect(views.slice(0, 4).map((v) => (v as { total: number }).total)).toEqual([7, 1.25, 2.5, 1.25]);
    expect(views[4]).toMatchObject({ code: 'invalid_api_key' });
  });

  it('a balance read sees a top-up that finished before it, also while other reads are running', async () => {
    const a = await api.newAccount({ credits: '1' });
    const before = Array.from({ length: 8 }, () => request(api.app).get('/v1/balance').set(a.auth));
    await topUp(api.db, a.accountId, '2.5');
    const after = await Promise.all(
      Array.from({ length: 8 }, () => request(api.app).get('/v1/balance').set(a.auth)),
    );
    for (const res of after)
      expect(res.body.data).toEqual({ currency: 'USD', total: 3.5, reserved: 0, available: 3.5 });
    for (const res of await Promise.all(before)) expect(res.status).toBe(200);
  });

  it('limits match the spec table and reflect the concurrency limit', async () => {
    const res = await request(api.app).get('/v1/limits').set(api.auth).expect(200);
    expect(res.body.data).toEqual({
      audio: { maxDurationSeconds: 36000, formats: expect.arrayContaining(['wav', 'mp3', 'flac', 'mp4']) },
      upload: {
        maxBytes: 2147483648,
        maxChunkBytes: 16777216,
        maxRequestBytes: 100000000,
        quotaBytes: 4 * 1024 ** 3,
      },
      glossary: { maxEntries: 100, maxTermChars: 80 },
      concurrency: { maxRunning: 2 },
      rateLimits: [
        { endpoint: 'POST /v1/transcripts', max: 120, windowSeconds: 60 },
        { endpoint: 'POST /v1/uploads', max: 120, windowSeconds: 60 },
        { endpoint: 'PUT /v1/uploads/{id}', max: 600, windowSeconds: 60 },
      ],
      idempotencyKeyMaxChars: 64,
    });
    const paid = await api.newAccount({ toppedUp: true });
    const res2 = await request(api.app).get('/v1/limits').set(paid.auth).expect(200);
    expect(res2.body.data.concurrency).toEqual({ maxRunning: null });
  });
});
