import { createGuardedClient, postJson, RESPONSE_READ_LIMIT } from '../src';
import {
  closedPort,
  loopbackTwoIsPublic,
  serversPerTest,
  startRawServer,
  UNASKED_UPGRADE,
  waitFor,
} from './loopback-server';

const server = serversPerTest();

const devClient = createGuardedClient({ allowPrivate: true, userAgent: 'Hark-Webhooks/1' });
const guardedClient = createGuardedClient({ userAgent: 'Hark-Webhooks/1' });
const body = JSON.stringify({ id: 'tr_1', status: 'done' });
const headers = { 'content-type': 'application/json', 'hark-delivery-id': 'whd_1' };

describe('postJson', () => {
  it('posts the body and headers and reports a 2xx with its body', async () => {
    const s = await server((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks'));
    const result = await postJson(devClient, `${s.url}/hook`, body, headers);
    expect(result).toEqual({
      statusCode: 200,
      bodyPreviewSource: 'thanks',
      error: null,
      durationMs: expect.any(Number),
    });
    expect(s.requests).toHaveLength(1);
    expect(s.requests[0]).toMatchObject({ method: 'POST', url: '/hook', body });
    expect(s.requests[0]?.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Hark-Webhooks/1',
      'hark-delivery-id': 'whd_1',
      'content-length': String(Buffer.byteLength(body)),
    });
  });

  it('does not follow a 302: the redirect comes back as the status', async () => {
    const target = await server((_req, res) => res.end('should not be reached'));
    const s = await server((_req, res) =>
      res.writeHead(302, { location: `${target.url}/elsewhere` }).end('moved'),
    );
    const result = await postJson(devClient, s.url, body, headers);
    expect(result).toMatchObject({ statusCode: 302, bodyPreviewSource: 'moved', error: null });
    expect(target.requests).toHaveLength(0);
  });

  it('reports 4xx and 5xx answers as statuses, not errors', async () => {
    const s = await server((req, res) => res.writeHead(req.url === '/gone' ? 410 : 503).end('nope'));
    await expect(postJson(devClient, `${s.url}/gone`, body, headers)).resolves.toMatchObject({
      statusCode: 410,
      error: null,
    });
    await expect(postJson(devClient, `${s.url}/x`, body, headers)).resolves.toMatchObject({
      statusCode: 503,
      error: null,
    });
  });

  it('cuts a server that never answers at the time-out', async () => {
    const s = await server(() => undefined);
    const result = await postJson(devClient, s.url, body, headers, { timeoutMs: 500 });
    expect(result).toMatchObject({ statusCode: null, bodyPreviewSource: null, error: 'timeout' });
    expect(result.durationMs).toBeGreaterThanOrEqual(480);
    expect(result.durationMs).toBeLessThan(2_000);
  });

  it('uses a 10 s time-out by default', async () => {
    const s = await server(() => undefined);
    const result = await postJson(devClient, s.url, body, headers);
    expect(result.error).toBe('timeout');
    expect(result.durationMs).toBeGreaterThanOrEqual(9_900);
    expect(result.durationMs).toBeLessThan(11_500);
  }, 15_000);

  it('keeps the status when the body stalls after the headers', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200);
      res.write('partial');
    });
    const result = await postJson(devClient, s.url, body, headers, { timeoutMs: 500 });
    expect(result).toMatchObject({ statusCode: 200, bodyPreviewSource: 'partial', error: null });
  });

  it('reads at most 4 KB of a big body and returns without waiting for the rest', async () => {
    const chunk = 'a'.repeat(64 * 1024);
    let sent = 0;
    const s = await server((_req, res) => {
      res.writeHead(200);
      // Streams 64 MB, far more than postJson should ever read.
      const pump = (): void => {
        while (sent < 64 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const result = await postJson(devClient, s.url, body, headers, { timeoutMs: 5_000 });
    expect(result.statusCode).toBe(200);
    expect(result.bodyPreviewSource).toBe('a'.repeat(RESPONSE_READ_LIMIT));
    expect(result.durationMs).toBeLessThan(2_000);
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });

  it('does not cut a multi-byte character in half at the read limit', async () => {
    const text = 'é'.repeat(RESPONSE_READ_LIMIT); // 2 bytes each
    const s = await server((_req, res) => res.end(text));
    const result = await postJson(devClient, s.url, body, headers);
    expect(result.bodyPreviewSource).toBe('é'.repeat(RESPONSE_READ_LIMIT / 2));
  });

  it('reports a refused connection', async () => {
    const port = await closedPort();
    const result = await postJson(devClient, `http://127.0.0.1:${port}/`, body, headers);
    expect(result).toMatchObject({ statusCode: null, bodyPreviewSource: null, error: 'connection_refused' });
  });

  it('reports a 101 answer nobody asked for as a failed request at once, and closes its socket', async () => {
    // Left to got, the upgraded socket stayed open after the deadline: one per attempt, for as
    // long as a hostile receiver liked.
    const raw = await startRawServer(UNASKED_UPGRADE);
    try {
      const result = await postJson(devClient, raw.url, body, headers, { timeoutMs: 2_000 });
      expect(result).toMatchObject({ statusCode: null, bodyPreviewSource: null, error: 'request_failed' });
      expect(result.durationMs).toBeLessThan(1_500);
      expect(raw.connections).toBe(1);
      await waitFor(() => raw.open() === 0);
    } finally {
      await raw.close();
    }
  });

  describe('with the guard on', () => {
    it('refuses an IP-literal loopback URL without connecting', async () => {
      const s = await server((_req, res) => res.end('ok'));
      const result = await postJson(guardedClient, s.url, body, headers);
      expect(result).toMatchObject({ statusCode: null, error: 'blocked_address' });
      expect(s.requests).toHaveLength(0);
    });

    it('refuses a name that resolves to 127.0.0.1 (localhost) at connect time', async () => {
      const s = await server((_req, res) => res.end('ok'));
      const result = await postJson(guardedClient, `http://localhost:${s.port}/`, body, headers);
      expect(result).toMatchObject({ statusCode: null, error: 'blocked_address' });
      expect(s.requests).toHaveLength(0);
    });

    it('lets an allowed address through (127.0.0.2 standing in for a public one)', async () => {
      const client = createGuardedClient({ isAllowedAddress: loopbackTwoIsPublic });
      const s = await server((_req, res) => res.end('ok'), '127.0.0.2');
      await expect(postJson(client, s.url, body, headers)).resolves.toMatchObject({
        statusCode: 200,
        error: null,
      });
    });
  });

  it('allows localhost when allowPrivate is set', async () => {
    const s = await server((_req, res) => res.end('ok'));
    const result = await postJson(devClient, `http://localhost:${s.port}/`, body, headers);
    expect(result).toMatchObject({ statusCode: 200, bodyPreviewSource: 'ok', error: null });
  });
});
