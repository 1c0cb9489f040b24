import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Db, createDb } from '@hark/db';
import {
  type AppProcess,
  REPO_ROOT,
  type TestAccount,
  createTestAccount,
  startApp,
  testAudio,
  testEngine,
} from '@hark/testing';

export const JFK = testAudio.jfkWav;
export const SDK_ROOT = path.resolve(__dirname, '..');

export interface Stack {
  /** The service root, as users pass it to `new Hark({ baseUrl })`. */
  baseUrl: string;
  db: Db;
  env: Record<string, string>;
  account(opts?: Parameters<typeof createTestAccount>[2]): Promise<TestAccount>;
  close(): Promise<void>;
}

/**
 * The service as operators run it: the built API, worker and webhook dispatcher as real processes
 * on real Postgres and Redis (own Redis prefix and storage directory), ffmpeg and whisper-cli
 * with the test model (which transcribes to empty text).
 */
export async function startStack(): Promise<Stack> {
  for (const app of ['api', 'worker', 'webhook-dispatcher']) {
    const main = path.join(REPO_ROOT, 'apps', app, 'dist/main.js');
    if (!existsSync(main)) throw new Error(`${main} is missing: build first (pnpm -s turbo run build)`);
  }
  const storage = await mkdtemp(path.join(tmpdir(), 'hark-sdk-it-'));
  const env: Record<string, string> = {
    PORT: '0',
    HARK_STORAGE_DIR: storage,
    HARK_TMP_DIR: path.join(storage, 'tmp'),
    HARK_REDIS_PREFIX: `hark-sdk-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    WHISPER_BIN: testEngine.whisperBin,
    WHISPER_MODEL: testEngine.whisperModel,
    HARK_RETENTION_SWEEP_MS: '0',
    // Webhook receivers of these tests listen on 127.0.0.1.
    ALLOW_PRIVATE_URLS: 'true',
  };
  const db = createDb({ databaseUrl: process.env.DATABASE_URL!, poolSize: 2 });
  const apps: AppProcess[] = [];
  try {
    const api = startApp('api', env);
    apps.push(api, startApp('worker', env), startApp('webhook-dispatcher', env));
    const port = (await api.waitForLog('api listening', 30_000)).port as number;
    await apps[1]!.waitForLog('worker ready', 30_000);
    await apps[2]!.waitForLog('dispatcher ready', 30_000);
    return {
      baseUrl: `http://127.0.0.1:${port}`,
      db,
      env,
      account: (opts = { toppedUp: true, credits: 1000 }) =>
        createTestAccount(db, process.env.HARK_SECRET!, opts),
      async close() {
        for (const a of apps) a.kill('SIGTERM');
        const codes = await Promise.all(apps.map((a) => a.exited));
        await db.$disconnect();
        await rm(storage, { recursive: true, force: true });
        if (codes.some((c) => c !== 0)) throw new Error(`apps exited with ${codes.join(', ')}`);
      },
    };
  } catch (e) {
    for (const a of apps) a.kill('SIGKILL');
    await db.$disconnect();
    throw e;
  }
}

export interface Notice {
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
}

/** A webhook receiver on 127.0.0.1 that records raw bodies and answers 204. */
export async function startReceiver(): Promise<{
  url: string;
  notices: Notice[];
  next(n: number, timeoutMs?: number): Promise<Notice[]>;
  close(): Promise<void>;
}> {
  const notices: Notice[] = [];
  const waiters: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      notices.push({ headers: req.headers, raw: Buffer.concat(chunks) });
      res.writeHead(204).end();
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/hark`,
    notices,
    async next(n, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (notices.length < n) {
        if (Date.now() > deadline) throw new Error(`receiver got ${notices.length} of ${n} notices`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
      return notices.slice(0, n);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
