// `pnpm db:migrate`: applies prisma/migrations to DATABASE_URL. Idempotent.
import '@hark/core/require-node'; // first: an older Node stops here, saying which it needs
import path from 'node:path';
import { migrate } from './migrate';

async function main(): Promise<void> {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL is required');
  const dir = process.env.HARK_MIGRATIONS_DIR ?? path.resolve(__dirname, '../../../prisma/migrations');
  const r = await migrate(url, dir);
  console.log(`migrations: ${r.applied.length} applied, ${r.skipped.length} already applied`);
}

main().catch((e: unknown) => {
  console.error(`db:migrate failed: ${(e as Error).message}`);
  process.exit(1);
});
