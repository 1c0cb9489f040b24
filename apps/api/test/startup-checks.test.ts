import { createDb } from '@hark/db';
import { createTestAccount, startApp } from '@hark/testing';

// A replica started with a mistyped HARK_SECRET, or a database it cannot reach, must refuse to
// start with a message naming the variable, not report ready and answer 401 or 500 to everything
// (operator audit). The built processes, as production runs them.
jest.setTimeout(60_000);

const db = createDb({ databaseUrl: process.env.DATABASE_URL!, poolSize: 2 });
beforeAll(() => createTestAccount(db, process.env.HARK_SECRET!)); // a key sealed with the right secret
afterAll(() => db.$disconnect());

const fatal = (logs: Record<string, unknown>[]) => JSON.stringify(logs);

it.each(['api', 'webhook-dispatcher'] as const)(
  '%s: a HARK_SECRET other than the one the keys were made with stops it at start',
  async (app) => {
    const p = startApp(app, { PORT: '0', HARK_SECRET: 'not-the-secret-the-keys-were-made-with' });
    expect(await p.exited).toBe(1);
    expect(fatal(p.logs)).toMatch(/HARK_SECRET/);
    expect(fatal(p.logs)).not.toContain('not-the-secret');
    expect(p.logs.map((l) => l.msg)).not.toContain('api listening');
  },
);

it('api: a database it cannot reach (for HARK_START_TIMEOUT_MS) stops it at start, naming DATABASE_URL without its password', async () => {
  const started = Date.now();
  const p = startApp('api', {
    PORT: '0',
    DATABASE_URL: 'postgresql://hark:S3cretPW@127.0.0.1:1/hark',
    HARK_START_TIMEOUT_MS: '2000',
  });
  expect(await p.exited).toBe(1);
  expect(fatal(p.logs)).toMatch(/DATABASE_URL/);
  expect(fatal(p.logs)).not.toContain('S3cretPW');
  expect(Date.now() - started).toBeGreaterThan(1500); // it waited for it first
});

it.each(['api', 'worker', 'webhook-dispatcher'] as const)(
  '%s: a HARK_S3_PREFIX without its trailing "/" stops it at start, naming the variable',
  async (app) => {
    // The orphan sweep removes what no upload row names under the prefix: with "hark", another
    // deployment's "hark-staging..." objects too (issue 36, item 3).
    const p = startApp(app, {
      PORT: '0',
      HARK_STORAGE: 's3',
      HARK_S3_BUCKET: 'b',
      HARK_S3_PREFIX: 'hark',
      HARK_METRICS_PORT: '0',
    });
    expect(await p.exited).toBe(1);
    expect(fatal(p.logs)).toMatch(/HARK_S3_PREFIX must be .*ending in \\"\/\\"/);
  },
);
