import { readFile } from 'node:fs/promises';
import { checkAccountInvariants, waitFor } from '@hark/testing';
import { reconcile } from '../src/sweepers/reconciler.sweeper';
import { type TestHarness, createAccount, createHarness, createTranscript, createUpload, testEnv, transcriptRow } from './worker-test-env';

let h: TestHarness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const deps = (over: Partial<Parameters<typeof reconcile>[0]> = {}) => ({
  db: h.db,
  queue: h.transcribeQueue,
  announce: async () => undefined,
  stop: async () => undefined,
  maxProcessingMs: 24 * 3600_000,
  graceMs: 0,
  ...over,
});

describe('reconciler', () => {
  it('a processing transcript whose job was lost (Redis flushed) is enqueued again and completes once', async () => {
    const acct = await createAccount(h.db, 100);
    const uploadId = await createUpload(h.db, h.blobs, acct.accountId, await readFile(testEnv.jfkWav));
    const id = await createTranscript(h.db, acct, { uploadId });
    // No enqueue: as if Redis lost the job. Several replicas reconcile at once.
    const mine = deps({ accountId: acct.accountId });
    await Promise.all([reconcile(mine), reconcile(mine), reconcile(mine)]);
    const job = await h.transcribeQueue.getJob(id);
    expect(job).toBeDefined();
    expect(await job!.getState()).toBe('waiting');
    const w = await h.startWorker();
    try {
      await waitFor(async () => (await transcriptRow(h.db, id))?.status === 'done', { timeout: 60_000, message: 'done' });
    } finally {
      await w.close();
    }
    expect(await h.db.ledgerEntry.count({ where: { transcriptId: id, kind: 'charge' } })).toBe(1);
    expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
    // A live job is left alone.
    expect(await reconcile(mine)).toEqual({ requeued: 0, expired: 0 });
  });

  it('a transcript past the maximum processing time fails engine_failed, hold released, announced', async () => {
    const acct = await createAccount(h.db, 100);
    const id = await createTranscript(h.db, acct, { url: 'https://example.com/a.wav', webhookUrl: 'https://example.com/hook' });
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
    expect(result).toEqual({ requeued: 0, expired: 1 });
    const row = await transcriptRow(h.db, id);
    expect(row).toMatchObject({ status: 'failed', errorCode: 'engine_failed' });
    expect(announced).toContain(id);
    expect(stopped).toContain(id);
    expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
  });

  it('leaves transcripts younger than the grace period alone (the API enqueues right after commit)', async () => {
    const acct = await createAccount(h.db, 100);
    const id = await createTranscript(h.db, acct, { url: 'https://example.com/a.wav' });
    expect(await reconcile(deps({ graceMs: 60_000, accountId: acct.accountId }))).toEqual({ requeued: 0, expired: 0 });
    expect(await h.transcribeQueue.getJob(id)).toBeUndefined();
  });
});
