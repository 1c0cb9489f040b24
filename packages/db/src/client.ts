import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaClient } from './generated/client';

export interface DbOptions {
  databaseUrl: string;
  /** Pool size per process. */
  poolSize?: number;
}

/** A Postgres connection pool, for Prisma (`createDb({ pool })`) and reads that skip it. */
export function createPgPool({ databaseUrl, poolSize = 10 }: DbOptions): pg.Pool {
  return new pg.Pool({ connectionString: databaseUrl, max: poolSize });
}

/**
 * One Prisma client per process, on the pg driver adapter (no native engine needed): on its own
 * pool, or on `pool` when the process also reads through it directly (the pool then belongs to
 * the caller; `$disconnect` does not end it).
 */
export function createDb(opts: DbOptions | { pool: pg.Pool }): PrismaClient {
  const adapter =
    'pool' in opts
      ? new PrismaPg(opts.pool)
      : new PrismaPg({ connectionString: opts.databaseUrl, max: opts.poolSize ?? 10 });
  // Interactive transactions wait up to 10 s for a pooled connection (Prisma's default is 2 s,
  // which turns a burst of creates on one account, queued on its row lock, into 500s).
  return new PrismaClient({ adapter, transactionOptions: { maxWait: 10_000, timeout: 15_000 } });
}

export type Db = PrismaClient;
export type PgPool = pg.Pool;
