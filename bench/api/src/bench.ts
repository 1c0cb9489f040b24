// GET /v1/balance at 32 connections: the real API (real Postgres and Redis, auth, sliding-window
// rate limiting, request logging) next to a bare Express 5 handler, in the same run on the same
// machine, in alternating rounds. Each server runs in its own forked process and wrk in another;
// this process only orchestrates and idles while wrk runs. Run through bench/api/run.sh, which provides
// DATABASE_URL, REDIS_URL and HARK_SECRET.
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadApiConfig } from '@hark/api/config';
import { createDb, type Db } from '@hark/db';
import { appNodeFlags, createTestAccount } from '@hark/testing';
import { Redis } from 'ioredis';
import { formatReport, type Measured, type Round } from './report';
import { runWrk } from './load';
import type { ServerKind, ServerReady } from './server';

// `--smoke`: one round of 1 s after a 1 s warm-up, the test command's check that the bench runs.
const smoke = process.argv.includes('--smoke');
const num = (name: string, def: number, smokeDef = def) =>
  Number(process.env[name] ?? (smoke ? smokeDef : def));
const settings = {
  connections: num('BENCH_CONNECTIONS', 32),
  threads: num('BENCH_THREADS', 2),
  warmupSeconds: num('BENCH_WARMUP_S', 5, 1),
  durationSeconds: num('BENCH_DURATION_S', 4, 1),
  rounds: num('BENCH_ROUNDS', 5, 1),
  accounts: num('BENCH_ACCOUNTS', 1),
  logFile: process.env.BENCH_SERVER_LOG ?? path.join(os.tmpdir(), 'hark-bench-api-server.log'),
};

/** CPU seconds (user + system) process `pid` has used so far. */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ)
}

async function withServer<T>(
  kind: ServerKind,
  env: NodeJS.ProcessEnv,
  fn: (r: ServerReady & { pid: number }) => Promise<T>,
): Promise<T> {
  const log = openSync(settings.logFile, 'a');
  // hark runs with the API's production Node flags, bare with Node's defaults (both inherit
  // this process's own flags, e.g. --cpu-prof).
  const execArgv = [...process.execArgv, ...(kind === 'hark' ? appNodeFlags('api') : [])];
  const child = fork(path.join(__dirname, 'server.js'), [kind], {
    env,
    execArgv,
    stdio: ['ignore', log, log, 'ipc'],
  });
  closeSync(log); // the child holds its own copy
  try {
    const ready = await new Promise<ServerReady>((resolve, reject) => {
      child.once('message', (m) => resolve(m as ServerReady));
      child.once('exit', (code) =>
        reject(new Error(`${kind} server exited ${code}; see ${settings.logFile}`)),
      );
    });
    return await fn({ ...ready, pid: child.pid! });
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  }
}

interface Target {
  kind: ServerKind;
  /** The API keys file both targets' requests rotate through (bare ignores the key). */
  keysFile: string;
  url: string;
  pid: number;
  notes: string[];
}

function targetOf(server: ServerReady & { pid: number }, keysFile: string): Target {
  const { kind, port, pid, notes } = server;
  return { kind, keysFile, url: `http://127.0.0.1:${port}/v1/balance`, pid, notes };
}

/** Checks one request answers 200 (the bench must measure 200s, not refusals), then warms up. */
async function prepare(t: Target, probeKey: string): Promise<void> {
  const probe = await fetch(t.url, { headers: { Authorization: `Bearer ${probeKey}` } });
  if (probe.status !== 200)
    throw new Error(`${t.kind}: GET /v1/balance answered ${probe.status}: ${await probe.text()}`);
  await runWrk({ ...load(t), durationSeconds: settings.warmupSeconds });
}

const load = (t: Target) => ({
  url: t.url,
  connections: settings.connections,
  threads: settings.threads,
  apiKeysFile: t.keysFile,
});

async function measure(t: Target): Promise<Measured> {
  const loadBefore = os.loadavg()[0] ?? 0;
  const cpuBefore = await cpuSeconds(t.pid);
  const result = await runWrk({ ...load(t), durationSeconds: settings.durationSeconds });
  const serverCpuSeconds = (await cpuSeconds(t.pid)) - cpuBefore;
  return { kind: t.kind, result, notes: t.notes, loadBefore, serverCpuSeconds };
}

/**
 * Many accounts, each with its own key, polling at the production rate limits: one key at 1,600
 * req/s would need its limit lifted, and its one-minute window (a sorted set in Redis) would hold
 * ~100k entries where a real account's holds at most its limit.
 */
async function createAccounts(db: Db, secret: string): Promise<{ accountIds: string[]; keys: string[] }> {
  const accountIds: string[] = [];
  const keys: string[] = [];
  for (let i = 0; i < settings.accounts; i += 16) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(16, settings.accounts - i) }, () =>
        createTestAccount(db, secret, { name: 'bench-api' }),
      ),
    );
    for (const a of batch) {
      accountIds.push(a.accountId);
      keys.push(a.apiKey);
    }
  }
  return { accountIds, keys };
}

async function main(): Promise<void> {
  const config = loadApiConfig(process.env);
  const redisPrefix = `hark-bench-${randomBytes(4).toString('hex')}`;
  const db = createDb({ databaseUrl: config.databaseUrl, poolSize: 4 });
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 1 });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hark-bench-keys-'));
  const keysFile = path.join(dir, 'keys');
  let accountIds: string[] = [];
  try {
    const made = await createAccounts(db, config.secret);
    accountIds = made.accountIds;
    await writeFile(keysFile, made.keys.join('\n') + '\n', { mode: 0o600 });
    const env = {
      ...process.env,
      BENCH_REDIS_PREFIX: redisPrefix,
      BENCH_LIFT_LIMIT: settings.accounts === 1 ? '1' : '0',
    };
    console.log(
      `GET /v1/balance, ${settings.connections} connections, wrk -t${settings.threads}, ${settings.accounts} accounts ` +
        `(a key each, requests rotate through them); ${settings.warmupSeconds} s warm-up each, then ` +
        `${settings.rounds} rounds of ${settings.durationSeconds} s per target, alternating; ` +
        `${os.cpus().length} CPUs shared by wrk, the servers, Postgres and Redis`,
    );
    // Both servers stay up; rounds alternate between them (and which goes first), so a slow
    // spell on a shared machine hits both rather than deciding the ratio.
    await withServer('hark', env, (h) =>
      withServer('bare', env, async (b) => {
        const hark = targetOf(h, keysFile);
        const bare = targetOf(b, keysFile);
        await prepare(hark, made.keys[0]!);
        await prepare(bare, made.keys[0]!);
        const rounds: Round[] = [];
        for (let i = 0; i < settings.rounds; i++) {
          if (i % 2 === 0) {
            const h1 = await measure(hark);
            rounds.push({ hark: h1, bare: await measure(bare) });
          } else {
            const b1 = await measure(bare);
            rounds.push({ hark: await measure(hark), bare: b1 });
          }
        }
        console.log(formatReport(rounds));
      }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
    if (accountIds.length)
      await db.apiKey.updateMany({
        where: { accountId: { in: accountIds } },
        data: { revokedAt: new Date() },
      });
    const keys = await redis.keys(`${redisPrefix}:*`);
    if (keys.length) await redis.del(...keys);
    await Promise.allSettled([db.$disconnect(), redis.quit()]);
  }
}

main().catch((err: unknown) => {
  console.error(`bench failed: ${(err as Error).message}`);
  process.exit(1);
});
