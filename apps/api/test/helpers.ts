import { randomBytes } from 'node:crypto';
import type { Db } from '@hark/db';
import type { Redis } from 'ioredis';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pino from 'pino';
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
  config.storageDir = overrides.storageDir ?? mkdtempSync(path.join(tmpdir(), 'hark-storage-'));
  // Wired as main.ts wires it, without waiting for Redis (this helper is synchronous; commands
  // sent before the first connection is ready wait for it).
  const deps = buildApiDeps({ ...config, dbPoolSize: 5 }, logger);
  const { db, redis } = deps;
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
      await deps.disconnect();
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
