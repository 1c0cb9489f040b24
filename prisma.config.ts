// Prisma CLI configuration. The native schema engine cannot be downloaded on offline machines;
// `generate` never runs it, so any executable satisfies the start-up check.
import { defineConfig } from 'prisma/config';

process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= '/bin/false';
process.env.CHECKPOINT_DISABLE ??= '1';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://hark:hark@127.0.0.1:5432/hark' },
});
