import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/client';

export interface DbOptions {
  databaseUrl: string;
  /** Pool size per process. */
  poolSize?: number;
}

/** One Prisma client per process, on the pg driver adapter (no native engine needed). */
export function createDb({ databaseUrl, poolSize = 10 }: DbOptions): PrismaClient {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: poolSize });
  // Interactive transactions wait up to 10 s for a pooled connection (Prisma's default is 2 s,
  // which turns a burst of creates on one account, queued on its row lock, into 500s).
  return new PrismaClient({ adapter, transactionOptions: { maxWait: 10_000, timeout: 15_000 } });
}

export type Db = PrismaClient;
