import { createDb, type Db } from '@hark/db';
import { createProcessingTranscript, createTestAccount, type TestAccount } from '@hark/testing';
import { feedAccount, feedAccountNow, markStarted } from '@hark/transcripts';
import { lockAccount } from '@hark/billing';

// feedAccount (packages/transcripts) against the real Postgres: what it counts, what it picks.
let db: Db;
beforeAll(() => {
  db = createDb({ databaseUrl: process.env.DATABASE_URL!, poolSize: 12 });
});
afterAll(() => db.$disconnect());

const account = () => createTestAccount(db, process.env.HARK_SECRET!, { toppedUp: true, credits: 1000 });

/** `n` held transcripts, created one millisecond apart (oldest first). */
async function held(acct: TestAccount, n: number): Promise<string[]> {
  const ids: string[] = [];
  const t0 = Date.now() - 60_000;
  for (let i = 0; i < n; i++) {
    ids.push(
      await createProcessingTranscript(db, acct, {
        url: `https://example.com/${i}.wav`,
        createdAt: new Date(t0 + i),
      }),
    );
  }
  return ids;
}

const queuedIds = async (accountId: string) =>
  (
    await db.transcript.findMany({
      where: { accountId, queuedAt: { not: null } },
      orderBy: { createdAt: 'asc' },
      select: { id: true },
    })
  ).map((t) => t.id);

describe('feedAccount', () => {
  it('marks the oldest held transcripts queued, up to the limit of waiting (queued, not started) jobs', async () => {
    const acct = await account();
    const ids = await held(acct, 5);
    expect(await feedAccountNow(db, acct.accountId, 2)).toEqual(ids.slice(0, 2));
    // Two wait already: nothing more, however often it runs.
    expect(await feedAccountNow(db, acct.accountId, 2)).toEqual([]);
    expect(await queuedIds(acct.accountId)).toEqual(ids.slice(0, 2));
    // One started: it no longer waits, so the next one goes in.
    expect(await markStarted(db, ids[0]!)).toEqual({ accountId: acct.accountId });
    expect(await feedAccountNow(db, acct.accountId, 2)).toEqual([ids[2]]);
    // A finished (canceled, failed, done) job does not wait either, started or not.
    await db.transcript.update({ where: { id: ids[1] }, data: { status: 'canceled' } });
    expect(await feedAccountNow(db, acct.accountId, 2)).toEqual([ids[3]]);
    // A raised limit takes effect at the next feed.
    expect(await feedAccountNow(db, acct.accountId, 3)).toEqual([ids[4]]);
    expect(await feedAccountNow(db, acct.accountId, 3)).toEqual([]);
  });

  it("counts only the account's own waiting jobs", async () => {
    const a = await account();
    const b = await account();
    const [a1] = await held(a, 1);
    const bIds = await held(b, 2);
    expect(await feedAccountNow(db, a.accountId, 1)).toEqual([a1]);
    expect(await feedAccountNow(db, b.accountId, 1)).toEqual([bIds[0]]);
  });

  it('concurrent feeds of one account never queue more than the limit (they serialise on the account lock)', async () => {
    const acct = await account();
    const ids = await held(acct, 10);
    const fed = (
      await Promise.all(Array.from({ length: 8 }, () => feedAccountNow(db, acct.accountId, 3)))
    ).flat();
    expect(fed.sort()).toEqual(ids.slice(0, 3).sort());
    expect(await queuedIds(acct.accountId)).toEqual(ids.slice(0, 3));
  });

  it('skips a held transcript another transaction has locked instead of waiting for it (no deadlock with cancel)', async () => {
    const acct = await account();
    const ids = await held(acct, 2);
    // A cancel locks the transcript row, then the account: the reverse of the feed's order.
    let release!: () => void;
    const holding = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const cancel = db.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT id FROM transcripts WHERE id = ${ids[0]} FOR UPDATE`;
        locked();
        await holding;
        await lockAccount(tx, acct.accountId);
      },
      { timeout: 10_000 },
    );
    await isLocked;
    const started = Date.now();
    const fed = await db.$transaction(async (tx) => {
      await lockAccount(tx, acct.accountId);
      return feedAccount(tx, acct.accountId, 1);
    });
    expect(fed).toEqual([ids[1]]);
    expect(Date.now() - started).toBeLessThan(2000);
    release();
    await cancel;
  });

  it('markStarted marks a job put in the queue by hand as queued, so the feed never picks a running transcript', async () => {
    const acct = await account();
    const [id] = await held(acct, 1);
    expect(await markStarted(db, id!)).toEqual({ accountId: acct.accountId });
    const row = await db.transcript.findUniqueOrThrow({ where: { id } });
    expect(row.queuedAt).not.toBeNull();
    expect(row.startedAt).not.toBeNull();
    expect(row.workerAttempts).toBe(1);
    expect(await feedAccountNow(db, acct.accountId, 1)).toEqual([]);
    await db.transcript.update({ where: { id }, data: { status: 'canceled' } });
    expect(await markStarted(db, id!)).toBeNull();
  });
});
