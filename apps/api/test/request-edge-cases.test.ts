import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import request from 'supertest';
import { answerClientErrors } from '../src/client-errors';
import { apiTest, REQUEST_ID, envelope } from './helpers';

// Requests the OpenAPI fuzzing and probing turned up: each once answered 500 `internal`.

const api = apiTest({ account: {} });

describe('requests the router or body parsers refuse', () => {
  it.each([
    ['/v1/transcripts/%E0%A4%A', 'not_found'],
    ['/v1/transcripts/%ZZ/cancel', 'not_found'],
    ['/v1/uploads/%ZZ', 'upload_not_found'],
  ])('an undecodable path (%s) is 404 %s with the rate-limit headers, not 500', async (path, code) => {
    const res = await request(api.app).get(path).set(api.auth);
    expect([res.status, res.body]).toEqual([404, envelope(code, false)]);
    expect(res.headers['ratelimit-limit']).toBeDefined();
  });

  it('a corrupt gzip body is 400 validation body_invalid, not 500', async () => {
    const res = await request(api.app)
      .post('/v1/transcripts')
      .set(api.auth)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .send('{"url":"https://example.com/a.wav"}');
    expect([res.status, res.body]).toEqual([400, envelope('validation', false, { body: 'body_invalid' })]);
  });
});

describe('requests the HTTP parser refuses (the server as main.ts sets it up)', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer(api.app);
    answerClientErrors(server, []);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** Sends raw bytes; resolves with everything the server wrote before closing. */
  const raw = (text: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
      let got = '';
      socket.setEncoding('latin1');
      socket.on('data', (c: string) => (got += c));
      socket.on('close', () => resolve(got));
      socket.on('error', reject);
    });

  it('header fields over 16 KiB: 431 headers_too_large in the envelope, with X-Request-Id', async () => {
    const answer = await raw(
      `GET /v1/balance HTTP/1.1\r\nHost: x\r\nAuthorization: ${api.auth.Authorization}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    const [head, body] = answer.split('\r\n\r\n') as [string, string];
    expect(head.split('\r\n')[0]).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(head).toMatch(/\r\nContent-Type: application\/json; charset=utf-8\r\n/);
    const id = /\r\nX-Request-Id: (\S+)/.exec(head)?.[1];
    expect(id).toMatch(REQUEST_ID);
    expect(JSON.parse(body)).toEqual(envelope('headers_too_large', false));
    expect(JSON.parse(body).error.requestId).toBe(id);
  });

  /** Status line, X-Request-Id and parsed body of a raw answer. */
  const parse = (answer: string) => {
    const [head, body] = answer.split('\r\n\r\n') as [string, string];
    return {
      statusLine: head.split('\r\n')[0],
      requestId: /\r\nX-Request-Id: (\S+)/.exec(head)?.[1],
      body: JSON.parse(body) as { error: { requestId: string } },
    };
  };

  it.each([
    [
      'U+0000 in a header value',
      `POST /v1/transcripts HTTP/1.1\r\nHost: x\r\nIdempotency-Key: a\u0000b\r\nContent-Length: 0\r\n\r\n`,
    ],
    [
      'Content-Length with Transfer-Encoding',
      'POST /v1/uploads HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
    ],
    ['a negative Content-Length', 'POST /v1/uploads HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'],
  ])(
    '%s: 400 validation (request_malformed) in the envelope, with X-Request-Id, not a bare 400',
    async (_l, text) => {
      // Every failure body is a JSON object (spec), and every response carries X-Request-Id
      // (decisions): Node's own answer had neither.
      const answer = parse(await raw(text));
      expect(answer.statusLine).toBe('HTTP/1.1 400 Bad Request');
      expect(answer.requestId).toMatch(REQUEST_ID);
      expect(answer.body).toEqual(envelope('validation', false, { request: 'request_malformed' }));
      expect(answer.body.error.requestId).toBe(answer.requestId);
    },
  );

  it('a request not received in time: 408 request_timeout (retryable) in the envelope', async () => {
    // Headers that never end; the server checks its time-outs every 50 ms here (30 s by default).
    const slow = http.createServer(
      { requestTimeout: 300, headersTimeout: 300, connectionsCheckingInterval: 50 },
      api.app,
    );
    answerClientErrors(slow, []);
    slow.listen(0, '127.0.0.1');
    await once(slow, 'listening');
    try {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = net.connect((slow.address() as AddressInfo).port, '127.0.0.1', () =>
          socket.write('POST /v1/uploads HTTP/1.1\r\nHost: x\r\n'),
        );
        let got = '';
        socket.setEncoding('latin1');
        socket.on('data', (c: string) => (got += c));
        socket.on('close', () => resolve(got));
        socket.on('error', reject);
      });
      const parsed = parse(answer);
      expect(parsed.statusLine).toBe('HTTP/1.1 408 Request Timeout');
      expect(parsed.body).toEqual(envelope('request_timeout', true));
    } finally {
      slow.closeAllConnections();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
  });
});

describe('GET /v1/openapi.json', () => {
  it('serves the document without a key, with rate-limit headers', async () => {
    const res = await request(api.app).get('/v1/openapi.json').expect(200);
    expect(res.body).toMatchObject({ openapi: '3.1.0', info: { version: '1.0.0' } });
    expect(res.headers['ratelimit-limit']).toBe('1200');
    expect(res.headers['x-request-id']).toBeDefined();
  });
});
