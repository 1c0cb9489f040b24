import { Counter, type Registry } from 'prom-client';
import { createRegistry } from './registry';
import { loadMetricsServerConfig } from './config';
import { type MetricsServer, serveMetrics, startMetricsServer } from './server';

let registry: Registry;
let open: MetricsServer;
let guarded: MetricsServer;

beforeAll(async () => {
  registry = createRegistry();
  new Counter({ name: 'hark_test_total', help: 'test', registers: [registry] }).inc(3);
  open = await startMetricsServer({ registry, port: 0, host: '127.0.0.1' });
  guarded = await startMetricsServer({ registry, port: 0, host: '127.0.0.1', token: 'tok-0123456789abcdef' });
});
afterAll(async () => {
  await Promise.all([open.close(), guarded.close()]);
});

const get = (s: MetricsServer, path: string, headers: Record<string, string> = {}) =>
  fetch(`http://127.0.0.1:${s.port}${path}`, { headers });

describe('metrics server', () => {
  it('GET /metrics: Prometheus text with the registry and the default process metrics', async () => {
    const res = await get(open, '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(registry.contentType);
    const text = await res.text();
    expect(text).toContain('hark_test_total 3');
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
  });

  it('GET /healthz: 200', async () => {
    const res = await get(open, '/healthz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { status: 'ok' } });
  });

  it('anything else: 404 envelope', async () => {
    for (const [path, method] of [
      ['/nope', 'GET'],
      ['/metrics', 'POST'],
    ] as const) {
      const res = await fetch(`http://127.0.0.1:${open.port}${path}`, { method });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { error: unknown }).error).toMatchObject({
        code: 'not_found',
        retryable: false,
      });
    }
  });

  it('with a token: 401 without or with a wrong one, 200 with it; /healthz stays open', async () => {
    for (const headers of [{}, { Authorization: 'Bearer wrong' }] as Record<string, string>[]) {
      const res = await get(guarded, '/metrics', headers);
      expect(res.status).toBe(401);
      expect(((await res.json()) as { error: unknown }).error).toMatchObject({
        code: 'invalid_api_key',
        retryable: false,
      });
    }
    expect((await get(guarded, '/metrics', { Authorization: 'Bearer tok-0123456789abcdef' })).status).toBe(
      200,
    );
    expect((await get(guarded, '/healthz')).status).toBe(200);
  });

  it('without a token: a request relayed by a proxy (not a direct loopback client) gets 401', async () => {
    const res = await get(open, '/metrics', { 'X-Forwarded-For': '192.0.2.7' });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
      /HARK_METRICS_TOKEN/,
    );
    expect((await get(open, '/healthz', { 'X-Forwarded-For': '192.0.2.7' })).status).toBe(200);
  });

  it('a failing collector makes the scrape 500, and the server keeps serving', async () => {
    const reg = createRegistry();
    const errors: unknown[] = [];
    new Counter({
      name: 'hark_broken_total',
      help: 'broken',
      registers: [reg],
      collect() {
        throw new Error('boom');
      },
    });
    const s = await startMetricsServer({
      registry: reg,
      port: 0,
      host: '127.0.0.1',
      onError: (e) => errors.push(e),
    });
    try {
      expect((await get(s, '/metrics')).status).toBe(500);
      expect(errors).toHaveLength(1);
      expect((await get(s, '/healthz')).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe('loadMetricsServerConfig', () => {
  it('binds to 127.0.0.1 unless HARK_METRICS_HOST says otherwise', () => {
    expect(loadMetricsServerConfig({}, 9464)).toEqual({ port: 9464, host: '127.0.0.1', token: undefined });
    expect(loadMetricsServerConfig({ HARK_METRICS_HOST: '0.0.0.0' }, 9464).host).toBe('0.0.0.0');
  });
});

describe('serveMetrics', () => {
  const log = () => {
    const lines: { level: string; msg: string; obj: object }[] = [];
    return {
      lines,
      info: (obj: object, msg: string) => lines.push({ level: 'info', msg, obj }),
      error: (obj: object, msg: string) => lines.push({ level: 'error', msg, obj }),
    };
  };

  it('port 0 turns it off', async () => {
    expect(await serveMetrics({ port: 0, host: '127.0.0.1', token: undefined }, registry, log())).toBeNull();
  });

  it('a port in use is logged, not fatal', async () => {
    const l = log();
    expect(
      await serveMetrics({ port: open.port, host: '127.0.0.1', token: undefined }, registry, l),
    ).toBeNull();
    expect(l.lines).toEqual([
      expect.objectContaining({ level: 'error', msg: expect.stringContaining('could not start') }),
    ]);
  });
});
