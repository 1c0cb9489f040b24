export { createDb, type Db, type DbOptions } from './client';
export { migrate, type MigrationResult } from './migrate';
export * from './generated/client';
export { Prisma } from './generated/client';
