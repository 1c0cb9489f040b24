import { checkSecretOpensKeys } from '@hark/billing';
import { checkDatabase, createDb, createPgPool } from '@hark/db';
import { logRedisErrors, producerConnection, waitForRedis } from '@hark/queue';
import { ChosenUploadHashing, createBlobStore } from '@hark/storage';
import type { ApiConfig } from './config';
import type { ApiDeps } from './context';
import type { Logger } from './logger';

export interface BuiltApiDeps extends ApiDeps {
  uploadHashing: ChosenUploadHashing;
  /** Closes Postgres and Redis (after the app has closed). */
  disconnect(): Promise<void>;
}

export interface ConnectedApiDeps extends BuiltApiDeps {
  /** Which upload hasher was chosen, for the startup log. */
  uploadHasher: string;
}

/**
 * Builds what the API needs without waiting for anything: one Postgres pool shared by Prisma and
 * the hot-path reads, the producer Redis connection, the blob store and the upload hasher.
 * Redis commands sent before the first connection is ready wait for it; from then on they fail
 * fast (no offline queue), so limits and queues answer at once while Redis is down.
 */
export function buildApiDeps(config: ApiConfig, logger: Logger): BuiltApiDeps {
  const pool = createPgPool({ databaseUrl: config.databaseUrl, poolSize: config.dbPoolSize });
  pool.on('error', (err) => logger.warn({ err: err.message }, 'idle Postgres connection failed'));
  const db = createDb({ pool });
  const redis = producerConnection(config.redisUrl, { enableOfflineQueue: true });
  redis.once('ready', () => {
    redis.options.enableOfflineQueue = false;
  });
  logRedisErrors(redis, (fields, msg) => logger.warn(fields, msg));
  return {
    config,
    db,
    pool,
    redis,
    logger,
    blobs: createBlobStore(config),
    uploadHashing: new ChosenUploadHashing(config.uploadHasher),
    async disconnect() {
      await Promise.allSettled([db.$disconnect(), redis.quit()]);
      await pool.end();
    },
  };
}

/**
 * As production runs it (main.ts; bench/api wires the same way): the built dependencies, once
 * Postgres answers with keys HARK_SECRET opens, Redis answers and the upload hasher is chosen (a
 * bad setting fails at boot).
 */
export async function connectApiDeps(config: ApiConfig, logger: Logger): Promise<ConnectedApiDeps> {
  const deps = buildApiDeps(config, logger);
  // A replica that cannot reach Postgres, or holds another HARK_SECRET, stops here instead of
  // reporting ready and answering 500 or 401 to everything.
  await checkDatabase(deps.db, config.startTimeoutMs);
  await checkSecretOpensKeys(deps.db, config.secret);
  await waitForRedis(deps.redis, config.startTimeoutMs);
  return { ...deps, uploadHasher: await deps.uploadHashing.describe() };
}
