import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { CorsOrigins } from './middleware/cors';
import { answerClientErrors } from './client-errors';

const PAGE = 'https://notes.example.com';

/**
 * A server set up as main.ts does, whose request handler never answers (the parser's answer is
 * the only one), with short time-outs; resolves with the head of what it wrote for `text`.
 */
async function answerTo(origins: CorsOrigins, text: string): Promise<string> {
  const server = http.createServer(
    { requestTimeout: 300, headersTimeout: 300, connectionsCheckingInterval: 50 },
    () => {},
  );
  answerClientErrors(server, origins);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    return await new Promise<string>((resolve, reject) => {
      const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1', () =>
        socket.write(text),
      );
      let got = '';
      socket.setEncoding('latin1');
      socket.on('data', (c: string) => (got += c));
      socket.on('close', () => resolve(got.split('\r\n\r\n')[0]!));
      socket.on('error', reject);
    });
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

const header = (head: string, name: string) => new RegExp(`\r\n${name}: ([^\r]*)`, 'i').exec(head)?.[1];

const malformed = (origin: string) =>
  `POST /v1/transcripts HTTP/1.1\r\nHost: x\r\nOrigin: ${origin}\r\nIdempotency-Key: a\u0000b\r\nContent-Length: 0\r\n\r\n`;
/** Headers complete, the body never finishes: Node's request time-out. */
const slowBody = (origin: string) =>
  `PUT /v1/uploads/up_1 HTTP/1.1\r\nHost: x\r\nOrigin: ${origin}\r\nContent-Length: 100\r\n\r\nabc`;
const bigHeaders = (origin: string) =>
  `GET /v1/balance HTTP/1.1\r\nHost: x\r\nOrigin: ${origin}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;

describe('answers of the HTTP parser to a cross-origin page', () => {
  it.each([
    ['400 request_malformed', malformed, 'HTTP/1.1 400 Bad Request'],
    ['408 request_timeout (body not received in time)', slowBody, 'HTTP/1.1 408 Request Timeout'],
    ['431 headers_too_large', bigHeaders, 'HTTP/1.1 431 Request Header Fields Too Large'],
  ])(
    '%s: an allowed origin may read it, with the headers the middleware exposes',
    async (_l, req, status) => {
      const head = await answerTo([PAGE], req(PAGE));
      expect(head.split('\r\n')[0]).toBe(status);
      expect(header(head, 'Access-Control-Allow-Origin')).toBe(PAGE);
      expect(header(head, 'Vary')).toBe('Origin');
      expect(header(head, 'Access-Control-Expose-Headers')).toMatch(/X-Request-Id/);
      expect(header(head, 'Access-Control-Expose-Headers')).toMatch(/Retry-After/);
      expect(header(head, 'X-Request-Id')).toBeTruthy();
    },
  );

  it('another origin gets no Access-Control header, only Vary: Origin', async () => {
    for (const req of [malformed, slowBody]) {
      const head = await answerTo([PAGE], req('https://evil.example'));
      expect(header(head, 'Access-Control-Allow-Origin')).toBeUndefined();
      expect(header(head, 'Access-Control-Expose-Headers')).toBeUndefined();
      expect(header(head, 'Vary')).toBe('Origin');
    }
  });

  it('any origin (*): Access-Control-Allow-Origin *, no Vary; none configured: nothing', async () => {
    const any = await answerTo('*', slowBody('https://evil.example'));
    expect(header(any, 'Access-Control-Allow-Origin')).toBe('*');
    expect(header(any, 'Vary')).toBeUndefined();
    const none = await answerTo([], malformed(PAGE));
    expect(header(none, 'Access-Control-Allow-Origin')).toBeUndefined();
    expect(header(none, 'Vary')).toBeUndefined();
  });

  it('an Origin line in a body is not taken for the header', async () => {
    const head = await answerTo(
      [PAGE],
      `POST /v1/transcripts HTTP/1.1\r\nHost: x\r\nX: a\u0000b\r\n\r\nOrigin: ${PAGE}\r\n`,
    );
    expect(header(head, 'Access-Control-Allow-Origin')).toBeUndefined();
  });
});
