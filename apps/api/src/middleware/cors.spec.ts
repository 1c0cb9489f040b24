import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { type CorsOrigins, cors, parseCorsOrigins } from './cors';

describe('parseCorsOrigins', () => {
  it('reads none, any, or a list of origins', () => {
    expect(parseCorsOrigins(undefined)).toEqual([]);
    expect(parseCorsOrigins(' ')).toEqual([]);
    expect(parseCorsOrigins('*')).toBe('*');
    expect(parseCorsOrigins('https://a.example, http://localhost:5173')).toEqual([
      'https://a.example',
      'http://localhost:5173',
    ]);
  });

  it('refuses what a browser never sends as an origin, naming the variable', () => {
    for (const bad of [
      'a.example',
      'https://a.example/',
      'https://a.example/app',
      'ftp://a.example',
      '*.example.com',
    ]) {
      expect(() => parseCorsOrigins(bad)).toThrow(/HARK_CORS_ORIGINS/);
    }
  });
});

describe('cors: Vary', () => {
  const PAGE = 'https://notes.example.com';

  /** The headers of GET / through the middleware, with `origin` as the Origin header (if any). */
  async function headersFor(origins: CorsOrigins, origin?: string): Promise<http.IncomingHttpHeaders> {
    const app = express();
    app.use(cors(origins));
    app.get('/', (_req, res) => {
      res.send('ok');
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const { port } = server.address() as AddressInfo;
      const res = await new Promise<http.IncomingMessage>((resolve, reject) =>
        http
          .get({ port, host: '127.0.0.1', path: '/', headers: origin ? { Origin: origin } : {} }, resolve)
          .on('error', reject),
      );
      res.resume();
      return res.headers;
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  it('with a list of origins every answer varies on Origin, allowed or not (a shared cache must not mix them)', async () => {
    for (const origin of [PAGE, undefined, 'https://evil.example']) {
      const h = await headersFor([PAGE], origin);
      expect([origin, h['vary']]).toEqual([origin, 'Origin']);
      expect(h['access-control-allow-origin']).toBe(origin === PAGE ? PAGE : undefined);
    }
  });

  it('any origin (*) or none configured: the answer does not depend on Origin', async () => {
    expect((await headersFor('*', PAGE))['vary']).toBeUndefined();
    expect((await headersFor([], PAGE))['vary']).toBeUndefined();
  });
});
