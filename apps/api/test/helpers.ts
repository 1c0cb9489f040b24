import { randomBytes } from 'node:crypto';
import { createDb, createPgPool, type Db } from '@hark/db';
import type { Redis } from 'ioredis';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LocalBlobStore } from '@hark/storage';
import pino from 'pino';
import { producerConnection } from '@hark/queue';
import { createApp } from '../src/app';
import { type ApiConfig, loadApiConfig } from '../src/config';
import type { ApiDeps } from '../src/context';
import type { Logger } from '../src/logger';

export interface TestApi {
  app: ReturnType<typeof createApp>;
  deps: ApiDeps;
  db: Db;
  redis: Redis;
  close(): Promise<void>;
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
  const pool = createPgPool({ databaseUrl: config.databaseUrl, poolSize: 5 });
  const db = createDb({ pool });
  // As main.ts connects, except that main.ts waits for Redis before it listens and this helper
  // cannot (it is synchronous): commands sent before the first connection is ready wait for it;
  // from then on the connection fails fast, as in production.
  const redis = producerConnection(config.redisUrl, { enableOfflineQueue: true });
  redis.once('ready', () => {
    redis.options.enableOfflineQueue = false;
  });
  const storageDir = overrides.storageDir ?? mkdtempSync(path.join(tmpdir(), 'hark-storage-'));
  config.storageDir = storageDir;
  const deps: ApiDeps = { config, db, pool, redis, logger, blobs: new LocalBlobStore(storageDir) };
  const app = createApp(deps);
  return {
    app,
    deps,
    db,
    redis,
    async close() {
      const keys = await redis.keys(`${config.redisPrefix}:*`);
      if (keys.length) await redis.del(...keys);
      await app.close();
      await Promise.allSettled([db.$disconnect(), redis.quit()]);
      await pool.end();
    },
  };
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
