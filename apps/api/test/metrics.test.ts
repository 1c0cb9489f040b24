import { metricSample as sample } from '@hark/testing';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import request from 'supertest';
import { apiTest, envelope, startTestApi, type TestApi } from './helpers';

const api = apiTest({ account: { toppedUp: true, credits: 1000 } });

/** An extra app for one test; closed once its Redis connection is up (close cleans its keys). */
async function extraApp(overrides: Parameters<typeof startTestApi>[0]): Promise<TestApi> {
  const a = startTestApi(overrides);
  if (a.redis.status !== 'ready') await once(a.redis, 'ready');
  return a;
}

const scrape = async () => (await request(api.app).get('/metrics').expect(200)).text;

describe('GET /metrics', () => {
  it('counts requests by method, route template and status; times them', async () => {
    const id = await api.createTranscript(api.account);
    await request(api.app).get(`/v1/transcripts/${id}`).set(api.auth).expect(200);
    await request(api.app).get(`/v1/transcripts/${id}`).set(api.auth).expect(200);
    // A 404 thrown inside the route still counts under its template.
    await request(api.app).get('/v1/transcripts/tr_unknown').set(api.auth).expect(404);
    await request(api.app).get('/v1/no/such/route').set(api.auth).expect(404);
    await request(api.app).get(`/v1/transcripts/${id}`).expect(401);
    await request(api.app).get('/nothing-here').expect(404);

    const res = await request(api.app).get('/metrics').expect(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = res.text;
    const count = (method: string, route: string, status: string) =>
      sample(text, 'hark_http_requests_total', { method, route, status });
    expect(count('POST', '/v1/transcripts', '201')).toBe(1);
    expect(count('GET', '/v1/transcripts/:id', '200')).toBe(2);
    expect(count('GET', '/v1/transcripts/:id', '404')).toBe(1);
    // Unknown paths and requests refused before routing: `unmatched`, never the raw path.
    expect(count('GET', 'unmatched', '404')).toBe(2);
    expect(count('GET', 'unmatched', '401')).toBe(1);
    expect(text).not.toContain(id);
    expect(text).not.toContain('no/such/route');
    expect(text).not.toContain('nothing-here');

    const bucket = sample(text, 'hark_http_request_duration_seconds_count', {
      method: 'GET',
      route: '/v1/transcripts/:id',
      status: '200',
    });
    expect(bucket).toBe(2);
    expect(text).toMatch(
      /hark_http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/v1\/transcripts\/:id",status="200"\} \d+/,
    );
    // Default process metrics come with it.
    expect(text).toContain('process_resident_memory_bytes');
    expect(text).toContain('nodejs_heap_size_used_bytes');
  });

  it('without HARK_METRICS_TOKEN: a request relayed by a proxy is refused (401 envelope)', async () => {
    for (const [header, value] of [
      ['X-Forwarded-For', '192.0.2.7'],
      ['Forwarded', 'for=192.0.2.7'],
      ['X-Real-IP', '192.0.2.7'],
    ]) {
      const res = await request(api.app).get('/metrics').set(header!, value!).expect(401);
      expect(res.body).toEqual(envelope('invalid_api_key', false));
      expect(res.body.error.message).toMatch(/HARK_METRICS_TOKEN/);
    }
  });

  // A real connection from this machine's own non-loopback address: the peer is not loopback.
  const outside = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && !a.internal && a.family === 'IPv4')?.address;
  (outside ? it : it.skip)(
    'without HARK_METRICS_TOKEN: a client from another address is refused',
    async () => {
      const server = api.app.listen(0, '0.0.0.0');
      await once(server, 'listening');
      try {
        const { port } = server.address() as AddressInfo;
        const res = await fetch(`http://${outside}:${port}/metrics`);
        expect(res.status).toBe(401);
        expect(await res.json()).toEqual(envelope('invalid_api_key', false));
        expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(200);
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  );

  it('scrapes count themselves; no API key needed', async () => {
    await scrape();
    const text = await scrape();
    expect(
      sample(text, 'hark_http_requests_total', { method: 'GET', route: '/metrics', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('every app has its own registry: a second app starts from zero', async () => {
    const other = await extraApp({});
    try {
      const text = (await request(other.app).get('/metrics').expect(200)).text;
      expect(
        sample(text, 'hark_http_requests_total', { method: 'POST', route: '/v1/transcripts', status: '201' }),
      ).toBeUndefined();
    } finally {
      await other.close();
    }
  });

  it('HARK_METRICS_TOKEN: 401 envelope without it or with a wrong one, 200 with it', async () => {
    const guarded = await extraApp({ metricsToken: 'metrics-token-0123456789' });
    try {
      for (const auth of [undefined, 'Bearer wrong-token-0123456789', 'metrics-token-0123456789']) {
        const req = request(guarded.app).get('/metrics');
        const res = await (auth ? req.set('Authorization', auth) : req).expect(401);
        expect(res.body).toEqual(envelope('invalid_api_key', false));
      }
      await request(guarded.app)
        .get('/metrics')
        .set('Authorization', 'Bearer metrics-token-0123456789')
        .expect(200);
      // With a token, a relayed request is fine (Prometheus through a proxy) and the scheme's case is not.
      await request(guarded.app)
        .get('/metrics')
        .set('Authorization', 'bearer metrics-token-0123456789')
        .set('X-Forwarded-For', '192.0.2.7')
        .expect(200);
    } finally {
      await guarded.close();
    }
  });
});
