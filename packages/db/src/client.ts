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
  return new PrismaClient({ adapter });
}

export type Db = PrismaClient;
