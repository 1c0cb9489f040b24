import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { newId } from '@hark/core';
import { createGuardedClient } from '@hark/http';
import {
  CALLER_DATA_ERASED,
  billingOf,
  callerDataLeft,
  checkAccountInvariants,
  waitFor,
  withCallerData,
} from '@hark/testing';
import { cancelTranscript, failTranscript } from '@hark/transcripts';
import pino from 'pino';
import { fetchAudio } from '../src/audio-source';
import { ScratchBudget } from '../src/scratch/scratch-budget';
import { sweepRetention } from '../src/sweepers/retention.sweeper';
import { sweepLockKey, withSweepLock } from '../src/sweepers/sweep-lock';
import { startSweeps } from '../src/sweepers/sweep-scheduler';
import { memorySweepCursor } from '../src/sweepers/sweep-cursor';
import { type UploadSweepDeps, sweepOrphanBlobs, sweepUploads } from '../src/sweepers/upload.sweeper';
import { createHarness, workerTest } from './worker-test-env';

// The sweeps run against the whole test database (as in production), so assertions look at
// this file's rows, never at totals.
const h = workerTest();

const HOUR = 3600_000;
const past = () => new Date(Date.now() - HOUR);
const blobFile = (id: string) => path.join(h.config.storageDir, id);
/** The upload sweep as the worker runs it (TTL 24 h), with a cursor of its own. */
const sweepUploadsNow = (o: Partial<UploadSweepDeps> = {}) =>
  sweepUploads({ db: h.db, blobs: h.blobs, uploadTtlHours: 24, orphanCursor: memorySweepCursor(), ...o });
/** Erased long enough ago for the upload sweep's final removal (an hour after the erasure). */
const settledErasure = () => new Date(Date.now() - 2 * HOUR);

async function doneTranscript(opts: { expiresAt: Date | null; uploadId?: string }) {
  const acct = await h.account(1000);
  const uploadId = opts.uploadId ?? (await h.upload(acct, Buffer.from('audio bytes')));
  const id = await h.transcript(acct, {
    uploadId,
    expiresAt: opts.expiresAt,
    glossary: { a: 'b' },
  });
  const content = {
    text: 'hello',
    words: [{ start: 0, end: 1, text: 'hello', speaker: null }],
    utterances: [],
    diarizationSegments: null,
  };
  expect(await h.complete(id, content)).toBe(true);
  return { acct, id, uploadId };
}

describe('retention sweep', () => {
  it('erases expired transcripts: content, glossary and audio gone, deletedAt set, usage kept', async () => {
    const expired = await doneTranscript({ expiresAt: past() });
    const kept = await doneTranscript({ expiresAt: new Date(Date.now() + HOUR) });
    const forever = await doneTranscript({ expiresAt: null });

    const result = await sweepRetention({ db: h.db, blobs: h.blobs });
    expect(result.expired).toBeGreaterThanOrEqual(1);

    const t = await h.row(expired.id);
    expect(t.deletedAt).not.toBeNull();
    expect(t.content).toBeNull();
    expect(t.glossary).toBeNull();
    expect(t.status).toBe('done');
    expect(t.usage).toMatchObject({ seconds: 1 });
    const upload = await h.db.upload.findUniqueOrThrow({ where: { id: expired.uploadId } });
    expect(upload.erasedAt).not.toBeNull();
    expect(upload.hashState).toBeNull();
    expect(existsSync(blobFile(expired.uploadId))).toBe(false);
    expect(await checkAccountInvariants(h.db, expired.acct.accountId)).toEqual([]);

    for (const other of [kept, forever]) {
      const row = await h.row(other.id);
      expect(row.deletedAt).toBeNull();
      expect(row.content).not.toBeNull();
      expect(existsSync(blobFile(other.uploadId))).toBe(true);
    }
    // Nothing left to do for these rows on a second pass.
    await sweepRetention({ db: h.db, blobs: h.blobs });
    expect((await h.row(kept.id)).deletedAt).toBeNull();
  });

  it('never touches a processing transcript', async () => {
    const acct = await h.account(1000);
    const uploadId = await h.upload(acct, Buffer.from('processing audio'));
    const processing = await h.transcript(acct, { uploadId, expiresAt: past() });

    await sweepRetention({ db: h.db, blobs: h.blobs });
    const row = await h.row(processing);
    expect([row.status, row.deletedAt]).toEqual(['processing', null]);
    expect((await h.db.upload.findUniqueOrThrow({ where: { id: uploadId } })).erasedAt).toBeNull();
    expect(existsSync(blobFile(uploadId))).toBe(true);
  });

  it('erases an expired transcript at the first sweep even while a sibling of its upload processes; only the file waits', async () => {
    // The sweep used to skip it while any transcript of the same upload was processing (held
    // behind the account's queue, that can be up to a day), keeping its text all that time.
    const acct = await h.account(1000);
    const uploadId = await h.upload(acct, Buffer.from('shared audio'));
    const reader = await h.transcript(acct, { uploadId, expiresAt: past() });
    const finished = await doneTranscript({ expiresAt: past(), uploadId });

    const result = await sweepRetention({ db: h.db, blobs: h.blobs });
    expect(result.expired).toBeGreaterThanOrEqual(1);
    const t = await h.row(finished.id);
    expect(t.deletedAt).not.toBeNull();
    expect(t.content).toBeNull();
    expect(t.glossary).toBeNull();
    expect((await h.db.upload.findUniqueOrThrow({ where: { id: uploadId } })).erasedAt).not.toBeNull();
    // The processing sibling is untouched and still reads the bytes.
    expect((await h.row(reader)).deletedAt).toBeNull();
    expect(existsSync(blobFile(uploadId))).toBe(true);

    const content = { text: '', words: [], utterances: [], diarizationSegments: null };
    expect(await h.complete(reader, content)).toBe(true);
    await sweepRetention({ db: h.db, blobs: h.blobs });
    expect((await h.row(reader)).deletedAt).not.toBeNull();
    expect(existsSync(blobFile(uploadId))).toBe(false);
  });

  it('erases the caller data on the row and on its delivery records; keeps what usage and billing need', async () => {
    const expired = await doneTranscript({ expiresAt: past() });
    await withCallerData(h.db, expired.id);
    const before = await billingOf(h.db, expired.id);
    expect(before.usage).not.toBeNull();

    await sweepRetention({ db: h.db, blobs: h.blobs });
    expect(await callerDataLeft(h.db, expired.id)).toEqual(CALLER_DATA_ERASED);
    expect(await billingOf(h.db, expired.id)).toEqual(before);
  });

  it('purges idempotency records past their expiry; keeps live ones', async () => {
    const acct = await h.account(1000);
    const stale = { accountId: acct.accountId, key: `stale-${Date.now()}`, requestHash: 'a'.repeat(64) };
    const live = { accountId: acct.accountId, key: `live-${Date.now()}`, requestHash: 'b'.repeat(64) };
    await h.db.idempotencyRecord.createMany({
      data: [
        { ...stale, expiresAt: past() },
        { ...live, expiresAt: new Date(Date.now() + HOUR) },
      ],
    });

    const result = await sweepRetention({ db: h.db, blobs: h.blobs });
    expect(result.idempotencyPurged).toBeGreaterThanOrEqual(1);
    const left = await h.db.idempotencyRecord.findMany({ where: { accountId: acct.accountId } });
    expect(left.map((r) => r.key)).toEqual([live.key]);
  });

  it("purges POST /v1/uploads' idempotency records past their expiry; keeps live ones and the upload", async () => {
    const acct = await h.account(1000);
    const uploadId = await h.upload(acct, Buffer.from('kept'));
    const base = { accountId: acct.accountId, uploadId, requestHash: 'c'.repeat(64) };
    await h.db.uploadIdempotencyRecord.createMany({
      data: [
        { ...base, key: 'stale-upload-key', expiresAt: past() },
        { ...base, key: 'live-upload-key', expiresAt: new Date(Date.now() + HOUR) },
      ],
    });

    const result = await sweepRetention({ db: h.db, blobs: h.blobs });
    expect(result.idempotencyPurged).toBeGreaterThanOrEqual(1);
    const left = await h.db.uploadIdempotencyRecord.findMany({ where: { accountId: acct.accountId } });
    expect(left.map((r) => r.key)).toEqual(['live-upload-key']);
    expect(await h.db.upload.count({ where: { id: uploadId } })).toBe(1);
  });
});

describe('upload sweep', () => {
  it('removes uploads no transcript used within the TTL, row and file; keeps fresh and used ones', async () => {
    const acct = await h.account(1000);
    const old = new Date(Date.now() - 25 * HOUR);
    const stale = await h.upload(acct, Buffer.from('stale'), { createdAt: old });
    const fresh = await h.upload(acct, Buffer.from('fresh'));
    const used = await h.upload(acct, Buffer.from('used'), { createdAt: old });
    await h.transcript(acct, { uploadId: used });
    // An Idempotency-Key of the stale upload's create goes with its row.
    await h.db.uploadIdempotencyRecord.create({
      data: {
        accountId: acct.accountId,
        key: `stale-${stale}`,
        requestHash: 'd'.repeat(64),
        uploadId: stale,
        expiresAt: new Date(Date.now() + HOUR),
      },
    });

    const result = await sweepUploadsNow();
    expect(result.removed).toBeGreaterThanOrEqual(1);
    expect(await h.db.upload.findUnique({ where: { id: stale } })).toBeNull();
    expect(await h.db.uploadIdempotencyRecord.count({ where: { uploadId: stale } })).toBe(0);
    expect(existsSync(blobFile(stale))).toBe(false);
    for (const id of [fresh, used]) {
      expect(await h.db.upload.findUnique({ where: { id } })).not.toBeNull();
      expect(existsSync(blobFile(id))).toBe(true);
    }
  });

  it('an upload whose transcripts all failed or were canceled is unused again: swept after the TTL, erased', async () => {
    // It used to stay, outside the upload quota, for the failed transcript's retention (up to a
    // year): a 2 GiB file with a wrong sha256 fails at once and costs nothing.
    const acct = await h.account(1000);
    const failedOnly = await h.upload(acct, Buffer.from('failed audio'));
    const failed = await h.transcript(acct, { uploadId: failedOnly });
    const canceled = await h.transcript(acct, { uploadId: failedOnly });
    const withDone = await h.upload(acct, Buffer.from('done audio'));
    const failedSibling = await h.transcript(acct, { uploadId: withDone });
    const done = await h.transcript(acct, { uploadId: withDone });
    const content = { text: '', words: [], utterances: [], diarizationSegments: null };
    expect(await h.complete(done, content)).toBe(true);
    expect(await failTranscript(h.db, failed, 'audio_mismatch', 'The audio does not match its sha256.')).toBe(
      true,
    );
    // A sibling still processing keeps it used; the last one ending without content frees it.
    expect((await h.db.upload.findUniqueOrThrow({ where: { id: failedOnly } })).usedAt).not.toBeNull();
    expect(await cancelTranscript(h.db, canceled)).toBe(true);
    expect(
      await failTranscript(h.db, failedSibling, 'audio_invalid', 'The audio could not be decoded.'),
    ).toBe(true);
    expect((await h.db.upload.findUniqueOrThrow({ where: { id: failedOnly } })).usedAt).toBeNull();
    expect((await h.db.upload.findUniqueOrThrow({ where: { id: withDone } })).usedAt).not.toBeNull();

    const old = new Date(Date.now() - 25 * HOUR);
    await h.db.upload.updateMany({
      where: { id: { in: [failedOnly, withDone] } },
      data: { updatedAt: old, sha256: 'ab'.repeat(32) },
    });
    await sweepUploadsNow();
    const swept = await h.db.upload.findUniqueOrThrow({ where: { id: failedOnly } });
    expect(swept.erasedAt).not.toBeNull();
    expect([swept.sha256, swept.actualSha256, swept.hashState]).toEqual([null, null, null]);
    expect(existsSync(blobFile(failedOnly))).toBe(false);
    // The failed transcript is still there, naming its erased upload.
    expect((await h.db.transcript.findUniqueOrThrow({ where: { id: failed } })).status).toBe('failed');
    const kept = await h.db.upload.findUniqueOrThrow({ where: { id: withDone } });
    expect([kept.erasedAt, kept.sha256]).toEqual([null, 'ab'.repeat(32)]);
    expect(existsSync(blobFile(withDone))).toBe(true);
    expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
  });

  it('removes the file an erasure left behind (crash between commit and file removal)', async () => {
    const { uploadId } = await doneTranscript({ expiresAt: null });
    // The erasure committed, the process died before removing the file. This one is of a
    // version that kept the upload's digests, which the sweep forgets as well.
    await h.db.upload.update({
      where: { id: uploadId },
      data: {
        erasedAt: settledErasure(),
        hashState: null,
        sha256: 'ef'.repeat(32),
        actualSha256: 'ef'.repeat(32),
      },
    });
    expect(existsSync(blobFile(uploadId))).toBe(true);

    const result = await sweepUploadsNow();
    expect(result.erasedFilesRemoved).toBeGreaterThanOrEqual(1);
    expect(existsSync(blobFile(uploadId))).toBe(false);
    // The row stays: the transcript still references it. Its digests do not.
    expect(
      await h.db.upload.findUnique({ where: { id: uploadId }, select: { sha256: true, actualSha256: true } }),
    ).toEqual({ sha256: null, actualSha256: null });
  });
});

describe('upload sweep: bounded work that always finishes (issue 36, item 3)', () => {
  const DAY = 24 * HOUR;

  /** `h.blobs` with every call recorded: method and key (or the listing's cursor). */
  function recordedStore() {
    const calls: { method: string; arg: unknown }[] = [];
    const blobs = new Proxy(h.blobs, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push({ method: String(prop), arg: args[0] });
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return { blobs, calls, about: (ids: Set<string>) => calls.filter((c) => ids.has(c.arg as string)) };
  }

  /** `n` upload rows of one account, with a blob each unless `blobs` is false. */
  async function uploads(n: number, data: { erasedAt?: Date } = {}, blobs = true): Promise<string[]> {
    const acct = await h.account(10);
    const ids = Array.from({ length: n }, () => newId('up'));
    await h.db.upload.createMany({
      data: ids.map((id) => ({ id, accountId: acct.accountId, receivedBytes: 5n, ...data })),
    });
    if (blobs) {
      await mkdir(h.config.storageDir, { recursive: true });
      await Promise.all(ids.map((id) => writeFile(blobFile(id), 'bytes')));
    }
    return ids;
  }

  it('an erased upload is cleared once, after its erasure settled, and marked: later sweeps never ask the store about it', async () => {
    // The sweep used to re-check every upload erased in the last 7 days on every run, three S3
    // calls each: a caller making erased uploads for free multiplied the calls of every run.
    const settled = await uploads(3, { erasedAt: settledErasure() });
    const [fresh] = await uploads(1, { erasedAt: new Date() });
    const first = recordedStore();
    await sweepUploadsNow({ blobs: first.blobs });
    for (const id of settled) expect(existsSync(blobFile(id))).toBe(false);
    // Within the hour after its erasure: its own erasure removes the bytes; the sure pass waits.
    expect(existsSync(blobFile(fresh!))).toBe(true);
    const rows = await h.db.upload.findMany({
      where: { id: { in: settled } },
      select: { blobsRemovedAt: true },
    });
    expect(rows.every((r) => r.blobsRemovedAt !== null)).toBe(true);
    expect(first.about(new Set(settled)).map((c) => c.method)).toEqual(['remove', 'remove', 'remove']);

    const again = recordedStore();
    await sweepUploadsNow({ blobs: again.blobs });
    expect(again.about(new Set(settled))).toEqual([]);
  });

  it('clears at most its batches a run, oldest erasure first; the next run carries on', async () => {
    // Within the 7 days the old sweep re-checked, all at once; older than every other test's.
    const erasedAt = new Date(Date.now() - 3 * DAY);
    const ids = await uploads(60, { erasedAt }, false);
    const mine = new Set(ids);
    const cleared = () => h.db.upload.count({ where: { id: { in: ids }, blobsRemovedAt: { not: null } } });
    // 50 batches of 1: at most 50 removals a run, and runs go on until every one is cleared.
    let runs = 0;
    while ((await cleared()) < 60 && runs < 10) {
      const store = recordedStore();
      await sweepUploadsNow({ blobs: store.blobs, batchSize: 1 });
      expect(store.about(mine).length).toBeLessThanOrEqual(50);
      runs++;
    }
    expect(await cleared()).toBe(60);
    expect(runs).toBeGreaterThan(1);
  });

  it('orphans after more than a thousand retained uploads are reached: the listing resumes where the last run stopped', async () => {
    // The orphan sweep stopped after 1,000 stale keys, counting keys that still had rows, and
    // always listed from the start: past ~1,000 retained uploads, later orphans stayed for good.
    const retained = await uploads(1100);
    const orphans = Array.from({ length: 150 }, () => newId('up'));
    await Promise.all(orphans.map((id) => writeFile(blobFile(id), 'orphan')));
    const cursor = memorySweepCursor();
    const store = recordedStore();
    const later = new Date(Date.now() + 60_000);
    let runs = 0;
    // 2 pages of 100 names a run: each run lists at most twice, whatever the store holds.
    while (orphans.some((id) => existsSync(blobFile(id))) && runs < 20) {
      const before = store.calls.length;
      await sweepOrphanBlobs({
        db: h.db,
        blobs: store.blobs,
        before: later,
        cursor,
        pageSize: 100,
        maxPages: 2,
      });
      const listings = store.calls.slice(before).filter((c) => c.method === 'staleKeys');
      expect(listings.length).toBeLessThanOrEqual(2);
      runs++;
    }
    expect(orphans.filter((id) => existsSync(blobFile(id)))).toEqual([]);
    expect(retained.filter((id) => !existsSync(blobFile(id)))).toEqual([]);
    expect(runs).toBeGreaterThan(1);
  });

  it('touches only names of the shape Hark gives uploads', async () => {
    // Whatever else sits beside the uploads (another application's files, another kind of id)
    // is not the sweep's to remove, row or no row.
    const foreign = ['k1', 'backup', `tr_${'a'.repeat(20)}`, 'up_short', `up_${'b'.repeat(21)}`];
    const orphan = newId('up');
    await mkdir(h.config.storageDir, { recursive: true });
    await Promise.all([...foreign, orphan].map((name) => writeFile(blobFile(name), 'x')));
    const cursor = memorySweepCursor();
    do await sweepOrphanBlobs({ db: h.db, blobs: h.blobs, before: new Date(Date.now() + 60_000), cursor });
    while (cursor.value !== null);
    expect(existsSync(blobFile(orphan))).toBe(false);
    expect(foreign.filter((name) => !existsSync(blobFile(name)))).toEqual([]);
  });
});

describe('erased uploads still read', () => {
  it('keeps the file while a transcript made from the upload processes, then removes it', async () => {
    const acct = await h.account(1000);
    const uploadId = await h.upload(acct, Buffer.from('shared audio'));
    const declared = createHash('sha256').update('shared audio').digest('hex');
    await h.db.upload.update({ where: { id: uploadId }, data: { sha256: declared } });
    const digests = () =>
      h.db.upload.findUniqueOrThrow({
        where: { id: uploadId },
        select: { sha256: true, actualSha256: true },
      });
    const reader = await h.transcript(acct, { uploadId });
    // Its sibling was deleted: the upload is erased, the processing one still needs the bytes.
    await h.db.upload.update({
      where: { id: uploadId },
      data: { erasedAt: settledErasure(), hashState: null },
    });

    await sweepUploadsNow();
    expect(existsSync(blobFile(uploadId))).toBe(true);
    // And the declared digest, which the reader's bytes are checked against (below).
    expect(await digests()).toEqual({ sha256: declared, actualSha256: null });
    const workDir = await mkdtemp(path.join(tmpdir(), 'hark-erased-'));
    try {
      const source = await fetchAudio(
        {
          db: h.db,
          blobs: h.blobs,
          http: createGuardedClient(),
          maxDownloadBytes: 1024,
          copiesUploads: false,
        },
        { url: null, uploadId },
        workDir,
        new AbortController().signal,
        new ScratchBudget(1024),
      );
      expect(await readFile(source, 'utf8')).toBe('shared audio');
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }

    const content = { text: '', words: [], utterances: [], diarizationSegments: null };
    expect(await h.complete(reader, content)).toBe(true);
    const result = await sweepUploadsNow();
    expect(result.erasedFilesRemoved).toBeGreaterThanOrEqual(1);
    expect(existsSync(blobFile(uploadId))).toBe(false);
    expect(result.digestsForgotten).toBeGreaterThanOrEqual(1);
    expect(await digests()).toEqual({ sha256: null, actualSha256: null });
  });
});

describe('sweep lock and schedule', () => {
  it('one replica at a time: a second taker gets null; the lock is released afterwards', async () => {
    const key = sweepLockKey(h.config.redisPrefix, 'test');
    let release!: () => void;
    const first = withSweepLock(
      h.redis,
      key,
      10_000,
      () => new Promise<string>((r) => (release = () => r('ran'))),
    );
    await waitFor(async () => (await h.redis.exists(key)) === 1);
    expect(await withSweepLock(h.redis, key, 10_000, async () => 'second')).toBeNull();
    release();
    expect(await first).toBe('ran');
    expect(await h.redis.exists(key)).toBe(0);
    expect(await withSweepLock(h.redis, key, 10_000, async () => 'again')).toBe('again');
  });

  it('a sweep that hangs (a store that never answers) is aborted at its lock time-out; the next round runs', async () => {
    // The scheduler's `running` flag used to stay set for good behind a hung sweep: retention
    // erasure stopped on that replica until it restarted.
    const signals: AbortSignal[] = [];
    let deafRuns = 0;
    const sweeps = startSweeps({
      intervalMs: 50,
      redis: h.redis,
      redisPrefix: `${h.config.redisPrefix}-hang`,
      log: pino({ level: 'silent' }),
      lockTtlMs: 600,
      sweeps: [
        {
          // Waits on a store that never answers: only its signal ends the call, as every store
          // call's does (the SDK's own time-outs are longer than the lock here).
          name: 'hangs',
          run: (signal) => {
            signals.push(signal);
            return new Promise<never>((_, reject) =>
              signal.addEventListener('abort', () => reject(signal.reason as Error)),
            );
          },
        },
        {
          // Ignores its signal for good: abandoned all the same at the TTL.
          name: 'deaf',
          run: () => {
            deafRuns++;
            return new Promise<never>(() => undefined);
          },
        },
      ],
    });
    try {
      await waitFor(() => signals.length >= 2 && deafRuns >= 1, {
        timeout: 10_000,
        message: 'a second round after the hung one',
      });
      expect(signals[0]!.aborted).toBe(true);
      // Stopping (the worker's shutdown) aborts a round waiting on the store, and returns.
      await waitFor(() => !signals.at(-1)!.aborted, {
        timeout: 5000,
        interval: 10,
        message: 'a round in flight',
      });
      const t0 = Date.now();
      await sweeps.stop();
      expect(Date.now() - t0).toBeLessThan(250);
    } finally {
      await sweeps.stop();
    }
    expect(signals.every((s) => s.aborted)).toBe(true);
  });

  it('stopping waits for a round that does not look at its signal (the reconciler), up to its TTL', async () => {
    // Stopping used to return at once whatever the round was doing: the worker then closed its
    // Postgres and Redis connections under the reconciler's work in flight.
    let started = false;
    let finished = false;
    const sweeps = startSweeps({
      intervalMs: 20,
      redis: h.redis,
      redisPrefix: `${h.config.redisPrefix}-stop`,
      log: pino({ level: 'silent' }),
      lockTtlMs: 10_000,
      sweeps: [
        {
          name: 'postgres-work',
          run: async () => {
            started = true;
            await h.db.$queryRaw`SELECT 1 AS slept FROM pg_sleep(0.4)`;
            finished = true;
            return { done: 1 };
          },
        },
      ],
    });
    await waitFor(() => started, { timeout: 5000, interval: 5, message: 'the round to start' });
    await sweeps.stop();
    expect(finished).toBe(true);

    // One that never settles holds the stop no longer than its lock's TTL.
    let deafStarted = false;
    const deaf = startSweeps({
      intervalMs: 20,
      redis: h.redis,
      redisPrefix: `${h.config.redisPrefix}-stop-deaf`,
      log: pino({ level: 'silent' }),
      lockTtlMs: 500,
      sweeps: [{ name: 'deaf', run: () => ((deafStarted = true), new Promise<never>(() => undefined)) }],
    });
    await waitFor(() => deafStarted, { timeout: 5000, interval: 5, message: 'the deaf round to start' });
    const t0 = Date.now();
    await deaf.stop();
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('a running worker sweeps on its own every HARK_RETENTION_SWEEP_MS', async () => {
    const swept = await createHarness({ HARK_RETENTION_SWEEP_MS: '100' });
    try {
      const expired = await doneTranscript({ expiresAt: past() });
      await swept.startWorker();
      await waitFor(async () => (await h.row(expired.id)).deletedAt !== null, {
        timeout: 5000,
        message: 'the scheduled retention sweep',
      });
    } finally {
      await swept.close();
    }
  });
});
