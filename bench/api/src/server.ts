// Bench server process, forked by bench.ts: `server.js hark` serves the real API (real Postgres,
// Redis, auth, rate limiting, request logging), `server.js bare` a bare Express 5 handler with a
// body of the same shape. Listens on 127.0.0.1, an ephemeral port, and reports it over IPC.
import type { Server } from 'node:http';
import express, { type Express } from 'express';
import { connectApiDeps, createApp, createLogger, loadApiConfig } from '@hark/api';

export type ServerKind = 'hark' | 'bare';

export interface ServerReady {
  kind: ServerKind;
  port: number;
  /** What the bench should know about the configuration it measured. */
  notes: string[];
}

async function startHark(): Promise<{ app: Express; close: () => Promise<void>; notes: string[] }> {
  const base = loadApiConfig(process.env);
  const config = {
    ...base,
    redisPrefix: process.env.BENCH_REDIS_PREFIX ?? `${base.redisPrefix}-bench`,
    // One account polling at 1,000+ req/s needs its limit lifted (every request still runs the
    // limiter); many accounts run at the production limits.
    ...(process.env.BENCH_LIFT_LIMIT === '1'
      ? { otherRouteLimit: { ...base.otherRouteLimit, max: 1_000_000_000 } }
      : {}),
  };
  // Wired as apps/api/src/main.ts wires it.
  const deps = await connectApiDeps(config, createLogger(config.logLevel, 'api'));
  await deps.db.$queryRaw`SELECT 1`;
  const app = createApp(deps);
  return {
    app,
    close: async () => {
      await app.close();
      await deps.disconnect();
    },
    notes: [
      `node ${process.execArgv.join(' ') || '(no flags)'}`,
      `Postgres pool ${config.dbPoolSize}`,
      `auth cache ${config.authCacheMs} ms`,
      `log level ${config.logLevel}`,
      `rate limit per account ${config.otherRouteLimit.max}/${config.otherRouteLimit.windowSeconds}s`,
    ],
  };
}

function startBare(): { app: Express; close: () => Promise<void>; notes: string[] } {
  const app = express();
  app.disable('x-powered-by');
  app.get('/v1/balance', (_req, res) => {
    res.json({ data: { currency: 'USD', total: 1000, reserved: 0, available: 1000 } });
  });
  return { app, close: async () => {}, notes: ['Express 5, one route, no middleware'] };
}

async function main(): Promise<void> {
  const kind = process.argv[2];
  if (kind !== 'hark' && kind !== 'bare') throw new Error(`usage: server.js hark|bare (got ${kind})`);
  if (!process.send) throw new Error('server.js runs as a child of bench.js (IPC channel needed)');
  const { app, close, notes } = kind === 'hark' ? await startHark() : startBare();
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  const ready: ServerReady = { kind, port: address.port, notes };
  process.send(ready);

  process.once('SIGTERM', () => {
    server.close(() => void close().then(() => process.exit(0)));
    server.closeAllConnections();
  });
}

main().catch((err: unknown) => {
  console.error(`bench server failed: ${(err as Error).stack ?? String(err)}`);
  process.exit(1);
});
