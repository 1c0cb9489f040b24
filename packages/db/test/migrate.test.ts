import path from 'node:path';
import { Client } from 'pg';
import { migrate } from '../src/migrate';

const MIGRATIONS = path.resolve(__dirname, '../../../prisma/migrations');

describe('migration runner', () => {
  const dbName = `hark_mig_${process.pid}_${Date.now()}`;
  const admin = new Client({ connectionString: process.env.DATABASE_URL });
  const url = new URL(process.env.DATABASE_URL!);
  url.pathname = `/${dbName}`;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
  });
  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  });

  it('applies every migration to an empty database, then is a no-op', async () => {
    const first = await migrate(url.toString(), MIGRATIONS);
    expect(first.applied.length).toBeGreaterThan(0);
    expect(first.skipped).toEqual([]);
    const second = await migrate(url.toString(), MIGRATIONS);
    expect(second.applied).toEqual([]);
    expect(second.skipped).toEqual(first.applied);

    const c = new Client({ connectionString: url.toString() });
    await c.connect();
    try {
      // Recorded the way `prisma migrate deploy` records them.
      const { rows } = await c.query(
        'SELECT migration_name, checksum, finished_at, applied_steps_count FROM _prisma_migrations ORDER BY migration_name',
      );
      expect(rows.map((r) => r.migration_name)).toEqual(first.applied);
      for (const r of rows) {
        expect(r.checksum).toMatch(/^[0-9a-f]{64}$/);
        expect(r.finished_at).not.toBeNull();
      }
      const tables = await c.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`);
      expect(tables.rows.map((r) => r.tablename)).toEqual(
        expect.arrayContaining([
          'accounts',
          'api_keys',
          'transcripts',
          'transcript_contents',
          'usage_records',
          'ledger_entries',
        ]),
      );
    } finally {
      await c.end();
    }
  });

  it('concurrent runners apply each migration once', async () => {
    const other = `${dbName}_b`;
    await admin.query(`CREATE DATABASE ${other}`);
    const u = new URL(url.toString());
    u.pathname = `/${other}`;
    try {
      const results = await Promise.all([1, 2, 3].map(() => migrate(u.toString(), MIGRATIONS)));
      const applied = results.flatMap((r) => r.applied);
      expect(applied.length).toBe(results[0]!.applied.length + results[0]!.skipped.length);
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${other} WITH (FORCE)`);
    }
  });
});
