import type { Db, PgPool } from '@hark/db';
import type { BlobStore, ChosenUploadHashing } from '@hark/storage';
import type { Redis } from 'ioredis';
import type { ApiConfig } from './config';
import type { Logger } from './logger';
import type { ApiMetrics } from './middleware/http-metrics';

/** Everything the API's modules need, passed in so tests can build an app on real services. */
export interface ApiDeps {
  config: ApiConfig;
  db: Db;
  /** The pool under `db`, for the hot-path reads that skip Prisma (key look-up, balance). */
  pool: PgPool;
  redis: Redis;
  logger: Logger;
  blobs: BlobStore;
  /** Default: the hasher `config.uploadHasher` names, chosen at the first upload. */
  uploadHashing?: ChosenUploadHashing;
  /** Default: a fresh ApiMetrics (its own registry). */
  metrics?: ApiMetrics;
}

export interface AuthContext {
  accountId: string;
  apiKeyId: string;
}

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      id: string;
      log: Logger;
      auth?: AuthContext;
    }
  }
}
