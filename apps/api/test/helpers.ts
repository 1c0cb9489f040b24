import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '@hark/db';
import { waitFor } from '@hark/testing';
import { type AccountOptions, type ApiFixture, type Stack, apiTest as apiFixture } from '@hark/testing/jest';
import type { Redis } from 'ioredis';
import { mkdtempSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
import request from 'supertest';
import { createApp } from '../src/app';
import { type ApiConfig, loadApiConfig } from '../src/config';
import type { ApiDeps } from '../src/context';
import type { Logger } from '../src/logger';
import { buildApiDeps } from '../src/wiring';

export interface TestApi {
  app: ReturnType<typeof createApp>;
  deps: ApiDeps;
  db: Db;
  redis: Redis;
  secret: string;
  /** Serves the app on 127.0.0.1 (for requests whose bodies supertest cannot shape); its port. */
  listen(): Promise<number>;
  /** POST /v1/transcripts (an https URL unless `body` says otherwise) as `account`: the new id. */
  createTranscript(
    account: { auth: Record<string, string> },
    body?: Record<string, unknown>,
  ): Promise<string>;
  /** Stops the app; `sharedPrefix`: leave the Redis keys alone (another app uses the same prefix). */
  close(opts?: { sharedPrefix?: boolean }): Promise<void>;
}

/** A real app on the real Postgres and Redis, with its own Redis key prefix. Logs nothing unless given a logger. */
export function startTestApi(
  overrides: Partial<ApiConfig> = {},
  env: NodeJS.ProcessEnv = process.env,
  logger: Logger = pino({ level: 'silent' }),
): TestApi {
  const config = {
    ...loadApiConfig(env),
    redisPrefix: `hark-test-${randomBytes(4).toString('hex')}`,
    ...overrides,
  };
  // A scratch storage folder this helper made is removed on close; one passed in is the caller's.
  const scratch = overrides.storageDir ? undefined : mkdtempSync(path.join(tmpdir(), 'hark-storage-'));
  config.storageDir = overrides.storageDir ?? scratch!;
  // Wired as main.ts wires it, without waiting for Redis (this helper is synchronous; commands
  // sent before the first connection is ready wait for it).
  const deps = buildApiDeps({ ...config, dbPoolSize: 5 }, logger);
  const { db, redis } = deps;
  const app = createApp(deps);
  let server: http.Server | undefined;
  return {
    app,
    deps,
    db,
    redis,
    secret: config.secret,
    async listen() {
      server ??= http.createServer(app);
      if (!server.listening) await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
      return (server.address() as AddressInfo).port;
    },
    async createTranscript(account, body = {}) {
      const res = await request(app)
        .post('/v1/transcripts')
        .set(account.auth)
        .send({ url: 'https://e.com/a.wav', ...body })
        .expect(201);
      return res.body.data.id as string;
    },
    async close({ sharedPrefix = false } = {}) {
      if (server?.listening) {
        server.closeAllConnections();
        await new Promise((r) => server!.close(r));
      }
      const keys = sharedPrefix ? [] : await redis.keys(`${config.redisPrefix}:*`);
      if (keys.length) await redis.del(...keys);
      await app.close();
      await deps.disconnect();
      if (scratch) await rm(scratch, { recursive: true, force: true });
    },
  };
}

/**
 * `startTestApi(config, process.env, logger)` for the block it is called in (`@hark/testing/jest` `apiTest`): started
 * before its tests, closed after; `account` makes an account with a key first.
 */
export function apiTest(
  opts: { config?: Partial<ApiConfig>; logger?: Logger; account?: AccountOptions } = {},
): ApiFixture<TestApi> {
  return apiFixture({
    start: () => startTestApi(opts.config, process.env, opts.logger),
    account: opts.account,
  });
}

/**
 * A request to the app served on `port` whose body the caller writes (supertest always sends
 * whole bodies): the request, and its answer once it ends.
 */
export function rawRequest(
  port: number,
  method: string,
  p: string,
  headers: Record<string, string | number>,
): {
  req: http.ClientRequest;
  response: Promise<{ status: number; body: string; connection?: string }>;
} {
  const req = http.request({ host: '127.0.0.1', port, method, path: p, headers });
  req.on('error', () => undefined);
  const response = new Promise<{ status: number; body: string; connection?: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }));
    });
    req.on('error', reject);
  });
  return { req, response };
}

/**
 * Sends `send` until it is not refused 409 (a dead writer's upload lock has not expired yet): its
 * 200 answer; any other status fails.
 */
export function whileUploadLocked<R extends { status: number }>(send: () => Promise<R>, timeout: number) {
  return waitFor(
    async () => {
      const r = await send();
      return r.status === 200 ? r : r.status === 409 ? null : Promise.reject(new Error(`status ${r.status}`));
    },
    { timeout, interval: 200, message: 'lock to expire' },
  );
}

export const REQUEST_ID = /^req_[A-Za-z0-9_-]{16}$/;

/** The exact error envelope, with any request id. */
export function envelope(code: string, retryable: boolean, fields?: Record<string, string>) {
  return {
    error: {
      code,
      message: expect.any(String),
      retryable,
      requestId: expect.stringMatching(REQUEST_ID),
      ...(fields ? { fields } : {}),
    },
  };
}

/**
 * Uploads `file` to a built stack as a new topped-up account, creates a transcript with `body`,
 * and waits (up to 5 minutes) for it to leave `processing`: the transcript as the API returns it.
 */
export async function transcribeFile(
  stack: Stack,
  file: string,
  body: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const acct = await stack.newAccount({ toppedUp: true, credits: 100 });
  const audio = await readFile(file);
  const sha = createHash('sha256').update(audio).digest('hex');
  const up = await fetch(`${stack.base}/uploads?sha256=${sha}`, {
    method: 'POST',
    headers: acct.auth,
    body: audio,
  });
  if (up.status !== 201) throw new Error(`upload answered ${up.status}`);
  const uploadId = ((await up.json()) as { data: { id: string } }).data.id;
  const created = await fetch(`${stack.base}/transcripts`, {
    method: 'POST',
    headers: { ...acct.auth, 'Content-Type': 'application/json' },
    body: JSON.stringify({ uploadId, ...body }),
  });
  if (created.status !== 201) throw new Error(`create answered ${created.status}`);
  let t = ((await created.json()) as { data: Record<string, unknown> }).data;
  for (let i = 0; i < 5 && t.status === 'processing'; i++) {
    const res = await fetch(`${stack.base}/transcripts/${t.id as string}?wait=60`, { headers: acct.auth });
    t = ((await res.json()) as { data: Record<string, unknown> }).data;
  }
  return t;
}
