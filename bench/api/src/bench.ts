// GET /v1/balance at 32 connections: the real API (real Postgres and Redis, auth, sliding-window
// rate limiting, request logging) next to a bare Express 5 handler, in the same run on the same
// machine. Each server runs in its own forked process and wrk in another; this process only
// orchestrates and idles while wrk runs. Run through bench/api/run.sh, which provides
// DATABASE_URL, REDIS_URL and HARK_SECRET.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb } from '@hark/db';
import { createTestAccount } from '@hark/testing';
import { Redis } from 'ioredis';
import { loadApiConfig } from '../../../apps/api/src/config';
import { formatReport, type Measured } from './report';
import { runWrk } from './load';
import type { ServerKind, ServerReady } from './server';

const num = (name: string, def: number) => Number(process.env[name] ?? def);
const settings = {
  connections: num('BENCH_CONNECTIONS', 32),
  threads: num('BENCH_THREADS', 2),
  warmupSeconds: num('BENCH_WARMUP_S', 3),
  durationSeconds: num('BENCH_DURATION_S', 10),
  logFile: process.env.BENCH_SERVER_LOG ?? path.join(os.tmpdir(), 'hark-bench-api-server.log'),
};

async function withServer<T>(
  kind: ServerKind,
  env: NodeJS.ProcessEnv,
  fn: (r: ServerReady) => Promise<T>,
): Promise<T> {
  const log = openSync(settings.logFile, 'a');
  const child = fork(path.join(__dirname, 'server.js'), [kind], { env, stdio: ['ignore', log, log, 'ipc'] });
  closeSync(log); // the child holds its own copy
  try {
    const ready = await new Promise<ServerReady>((resolve, reject) => {
      child.once('message', (m) => resolve(m as ServerReady));
      child.once('exit', (code) =>
        reject(new Error(`${kind} server exited ${code}; see ${settings.logFile}`)),
      );
    });
    return await fn(ready);
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  }
}

async function measure(kind: ServerKind, env: NodeJS.ProcessEnv, apiKey?: string): Promise<Measured> {
  return withServer(kind, env, async ({ port, notes }) => {
    const url = `http://127.0.0.1:${port}/v1/balance`;
    // One checked request first: the bench must measure 200s, not refusals.
    const probe = await fetch(url, { headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {} });
    if (probe.status !== 200)
      throw new Error(`${kind}: GET /v1/balance answered ${probe.status}: ${await probe.text()}`);
    const base = {
      url,
      connections: settings.connections,
      threads: settings.threads,
      ...(apiKey ? { apiKey } : {}),
    };
    await runWrk({ ...base, durationSeconds: settings.warmupSeconds });
    const load1 = os.loadavg()[0] ?? 0;
    const result = await runWrk({ ...base, durationSeconds: settings.durationSeconds });
    return { kind, result, notes, loadBefore: load1 };
  });
}

async function main(): Promise<void> {
  const config = loadApiConfig(process.env);
  const redisPrefix = `hark-bench-${randomBytes(4).toString('hex')}`;
  const db = createDb({ databaseUrl: config.databaseUrl, poolSize: 2 });
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1 });
  try {
    const account = await createTestAccount(db, config.secret, { name: 'bench-api' });
    const env = { ...process.env, BENCH_REDIS_PREFIX: redisPrefix };
    console.log(
      `GET /v1/balance, ${settings.connections} connections, wrk -t${settings.threads}, ` +
        `${settings.warmupSeconds} s warm-up + ${settings.durationSeconds} s per target; ` +
        `${os.cpus().length} CPUs shared by wrk, the server, Postgres and Redis`,
    );
    const hark = await measure('hark', env, account.apiKey);
    const bare = await measure('bare', env);
    console.log(formatReport(hark, bare));
    await db.apiKey.updateMany({ where: { accountId: account.accountId }, data: { revokedAt: new Date() } });
  } finally {
    const keys = await redis.keys(`${redisPrefix}:*`);
    if (keys.length) await redis.del(...keys);
    await Promise.allSettled([db.$disconnect(), redis.quit()]);
  }
}

main().catch((err: unknown) => {
  console.error(`bench failed: ${(err as Error).message}`);
  process.exit(1);
});
