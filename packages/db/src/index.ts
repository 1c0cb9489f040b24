export { createDb, createPgPool, type Db, type DbOptions, type PgPool } from './client';
export { checkDatabase } from './check-database';
export { migrate, type MigrationResult } from './migrate';
export * from './generated/client';
export { Prisma } from './generated/client';
