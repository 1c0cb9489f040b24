import { once } from 'node:events';
import { createDb, createPgPool } from '@hark/db';
import { producerConnection } from '@hark/queue';
import { ChosenUploadHashing, LocalBlobStore } from '@hark/storage';
import type { ApiConfig } from './config';
import type { ApiDeps } from './context';
import type { Logger } from './logger';

export interface ConnectedApiDeps extends ApiDeps {
  uploadHashing: ChosenUploadHashing;
  /** Which upload hasher was chosen, for the startup log. */
  uploadHasher: string;
  /** Closes Postgres and Redis (after the app has closed). */
  disconnect(): Promise<void>;
}

/**
 * Connects what the API needs, as production runs it (main.ts; bench/api wires the same way):
 * one Postgres pool shared by Prisma and the hot-path reads, the producer Redis connection,
 * the blob store and the upload hasher. Resolves once Redis answers (limits and queues fail
 * fast, without an offline queue) and the hasher is chosen (a bad setting fails at boot).
 */
export async function connectApiDeps(config: ApiConfig, logger: Logger): Promise<ConnectedApiDeps> {
  const pool = createPgPool({ databaseUrl: config.databaseUrl, poolSize: config.dbPoolSize });
  pool.on('error', (err) => logger.warn({ err: err.message }, 'idle Postgres connection failed'));
  const db = createDb({ pool });
  const redis = producerConnection(config.redisUrl);
  redis.on('error', (err) => logger.warn({ err: err.message }, 'redis error'));
  if (redis.status !== 'ready') await once(redis, 'ready');
  const uploadHashing = new ChosenUploadHashing(config.uploadHasher);
  const uploadHasher = await uploadHashing.describe();
  return {
    config,
    db,
    pool,
    redis,
    logger,
    blobs: new LocalBlobStore(config.storageDir),
    uploadHashing,
    uploadHasher,
    async disconnect() {
      await Promise.allSettled([db.$disconnect(), redis.quit()]);
      await pool.end();
    },
  };
}
