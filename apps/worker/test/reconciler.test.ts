import { readFile } from 'node:fs/promises';
import { checkAccountInvariants, waitFor } from '@hark/testing';
import { feedAccountNow } from '@hark/transcripts';
import { reconcile } from '../src/sweepers/reconciler.sweeper';
import { testEnv, workerTest } from './worker-test-env';

const h = workerTest();

const deps = (over: Partial<Parameters<typeof reconcile>[0]> = {}) => ({
  db: h.db,
  transcribe: h.queues.transcribe,
  announce: async () => undefined,
  stop: async () => undefined,
  maxProcessingMs: 24 * 3600_000,
  graceMs: 0,
  queuedPerAccount: 1,
  ...over,
});

const jobState = async (id: string) => (await h.transcribeQueue.getJob(id))?.getState() ?? 'missing';

describe('reconciler', () => {
  it('a queued transcript whose job was lost (Redis flushed) is enqueued again and completes once', async () => {
    const acct = await h.account(100);
    const uploadId = await h.upload(acct, await readFile(testEnv.jfkWav));
    const id = await h.transcript(acct, { uploadId });
    // Fed into the queue, then Redis lost the job. Several replicas reconcile at once.
    expect(await feedAccountNow(h.db, acct.accountId, 1)).toEqual([id]);
    const mine = deps({ accountId: acct.accountId });
    const results = await Promise.all([reconcile(mine), reconcile(mine), reconcile(mine)]);
    expect(results.reduce((n, r) => n + r.requeued, 0)).toBeGreaterThanOrEqual(1);
    expect(await jobState(id)).toBe('waiting');
    const w = await h.startWorker();
    try {
      await waitFor(async () => (await h.row(id))?.status === 'done', {
        timeout: 60_000,
        message: 'done',
      });
    } finally {
      await w.close();
    }
    expect(await h.db.ledgerEntry.count({ where: { transcriptId: id, kind: 'charge' } })).toBe(1);
    expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
    // A live job is left alone.
    expect(await reconcile(mine)).toEqual({ requeued: 0, expired: 0, fed: 0 });
  });

  it('a crash between marking transcripts queued and enqueuing them strands nothing', async () => {
    const acct = await h.account(100);
    const ids = [
      await h.transcript(acct, { url: 'https://example.com/a.wav' }),
      await h.transcript(acct, { url: 'https://example.com/b.wav' }),
    ];
    // The feed committed (the first is queued, the second held behind it), then the process died.
    expect(await feedAccountNow(h.db, acct.accountId, 1)).toEqual([ids[0]]);
    expect(await jobState(ids[0]!)).toBe('missing');
    const mine = deps({ accountId: acct.accountId });
    // Within the grace period the producer may still be about to enqueue: left alone.
    expect(await reconcile(deps({ accountId: acct.accountId, graceMs: 60_000 }))).toEqual({
      requeued: 0,
      expired: 0,
      fed: 0,
    });
    expect(await reconcile(mine)).toEqual({ requeued: 1, expired: 0, fed: 0 });
    expect(await jobState(ids[0]!)).toBe('waiting');
    // The held one stays out of the queue: its account already has one job waiting.
    expect(await jobState(ids[1]!)).toBe('missing');
    expect((await h.row(ids[1]!)).queuedAt).toBeNull();
    expect(await reconcile(mine)).toEqual({ requeued: 0, expired: 0, fed: 0 });
  });

  it('feeds an account whose held transcripts nobody fed (a worker died between starting a job and feeding)', async () => {
    const acct = await h.account(100);
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c'])
      ids.push(await h.transcript(acct, { url: `https://example.com/${name}.wav` }));
    const mine = deps({ accountId: acct.accountId });
    // None queued: the oldest goes in, up to one waiting job for the account.
    expect(await reconcile(mine)).toEqual({ requeued: 0, expired: 0, fed: 1 });
    expect(await Promise.all(ids.map(jobState))).toEqual(['waiting', 'missing', 'missing']);
    expect(await reconcile(mine)).toEqual({ requeued: 0, expired: 0, fed: 0 });
    // The first started (as a worker marks it), the feed never ran: the reconciler feeds the next.
    await h.db.transcript.update({ where: { id: ids[0] }, data: { startedAt: new Date() } });
    expect(await reconcile(mine)).toEqual({ requeued: 0, expired: 0, fed: 1 });
    expect(await Promise.all(ids.slice(1).map(jobState))).toEqual(['waiting', 'missing']);
    // With room for two waiting jobs, the last one goes in too.
    expect(await reconcile(deps({ accountId: acct.accountId, queuedPerAccount: 2 }))).toEqual({
      requeued: 0,
      expired: 0,
      fed: 1,
    });
    expect(await jobState(ids[2]!)).toBe('waiting');
    for (const id of ids) await (await h.transcribeQueue.getJob(id))?.remove();
  });

  it('a transcript past the maximum processing time fails engine_failed, hold released, announced', async () => {
    const acct = await h.account(100);
    const id = await h.transcript(acct, {
      url: 'https://example.com/a.wav',
      webhookUrl: 'https://example.com/hook',
    });
    // Held in Postgres the whole time: the maximum still counts from creation.
    const held = await h.transcript(acct, { url: 'https://example.com/b.wav' });
    await feedAccountNow(h.db, acct.accountId, 1);
    expect((await h.row(held)).queuedAt).toBeNull();
    const announced: string[] = [];
    const stopped: string[] = [];
    const result = await reconcile(
      deps({
        accountId: acct.accountId,
        maxProcessingMs: 1000,
        now: new Date(Date.now() + 5000),
        announce: async (tid) => void announced.push(tid),
        stop: async (tid) => void stopped.push(tid),
      }),
    );
    expect(result).toEqual({ requeued: 0, expired: 2, fed: 0 });
    for (const t of [id, held])
      expect(await h.row(t)).toMatchObject({ status: 'failed', errorCode: 'engine_failed' });
    expect(announced).toEqual(expect.arrayContaining([id, held]));
    expect(stopped).toContain(id);
    expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
  });

  it('leaves transcripts younger than the grace period alone (the API enqueues right after commit)', async () => {
    const acct = await h.account(100);
    const id = await h.transcript(acct, { url: 'https://example.com/a.wav' });
    expect(await reconcile(deps({ graceMs: 60_000, accountId: acct.accountId }))).toEqual({
      requeued: 0,
      expired: 0,
      fed: 0,
    });
    expect(await h.transcribeQueue.getJob(id)).toBeUndefined();
  });
});

describe('a running worker reconciles on its own schedule', () => {
  // Retention and upload sweeps off, as an operator keeping content would set them.
  const r = workerTest({
    HARK_RETENTION_SWEEP_MS: '0',
    HARK_RECONCILE_INTERVAL_MS: '200',
    HARK_RECONCILE_GRACE_MS: '0',
  });

  it('with HARK_RETENTION_SWEEP_MS=0: a lost job is enqueued again and completes, an expired transcript fails', async () => {
    const acct = await r.account(100);
    const uploadId = await r.upload(acct, await readFile(testEnv.jfkWav));
    const lost = await r.transcript(acct, { uploadId });
    // Fed into the queue, then Redis lost the job.
    expect(await feedAccountNow(r.db, acct.accountId, 1)).toEqual([lost]);
    // Held behind it, and past HARK_MAX_PROCESSING_MS (24 h) since its creation.
    const expired = await r.transcript(acct, { url: 'https://example.com/a.wav' });
    await r.db.transcript.update({
      where: { id: expired },
      data: { createdAt: new Date(Date.now() - 25 * 3600_000) },
    });
    // Limited to this account: the suites share one database.
    await r.startWorker({ reconcileAccountId: acct.accountId });

    expect(await r.finished(expired, { timeout: 10_000 })).toMatchObject({
      status: 'failed',
      errorCode: 'engine_failed',
      errorMessage: 'Transcription did not finish within the time allowed.',
    });
    expect((await r.finished(lost, { timeout: 60_000 })).status).toBe('done');
    expect(await r.db.ledgerEntry.count({ where: { transcriptId: lost, kind: 'charge' } })).toBe(1);
    expect(await checkAccountInvariants(r.db, acct.accountId)).toEqual([]);
  });
});
