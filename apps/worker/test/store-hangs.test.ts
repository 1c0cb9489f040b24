import { newId } from '@hark/core';
import { checkAccountInvariants, silentS3Store, waitFor } from '@hark/testing';
import { cancelTranscript } from '@hark/transcripts';
import { type TestHarness, createHarness } from './worker-test-env';

// Issue 36, item 2, on the worker's side: the object store accepts connections and never
// answers. Fetching (and sealing) an upload used to hang there for good, and with it the job's
// slot: not even the reconciler's stop (a cancel) freed it. Now the fetch fails within the
// client's time-outs and the attempt is retried like any transient failure, and a cancel ends
// it at once.

/** An upload row as the API records one, whose bytes only the (silent) store would hold. */
async function uploadRow(h: TestHarness, accountId: string): Promise<string> {
  const id = newId('up');
  await h.db.upload.create({ data: { id, accountId, receivedBytes: 1000n } });
  return id;
}

describe('a worker whose object store never answers', () => {
  it('fails the attempt within the time-outs and retries; the last attempt fails the transcript, hold released, slot free', async () => {
    const store = await silentS3Store(300);
    const h = await createHarness({ ...store.env, HARK_WORKER_CONCURRENCY: '1' });
    try {
      const worker = await h.startWorker();
      const acct = await h.account(1000);
      const id = await h.transcript(acct, { uploadId: await uploadRow(h, acct.accountId) });
      const t0 = Date.now();
      await h.enqueue(id, { attempts: 2, backoff: { type: 'fixed', delay: 100 } });
      const row = await waitFor(
        async () => {
          const t = await h.row(id);
          return t.status === 'processing' ? null : t;
        },
        { timeout: 30_000, message: 'the transcript to leave processing' },
      );
      expect(row).toMatchObject({ status: 'failed', errorCode: 'engine_failed' });
      expect(row.reserved.toString()).toBe('0');
      // Two attempts of about a second each (three SDK tries of 300 ms), not for ever.
      expect(Date.now() - t0).toBeLessThan(20_000);
      expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
      expect(worker.active.size).toBe(0);
    } finally {
      await h.close();
      await store.close();
    }
  });

  it('a cancel (the reconciler stop included) ends a job waiting on the store at once, not after the time-outs', async () => {
    // Time-outs of a minute: only the job's abort can end it soon.
    const store = await silentS3Store(60_000);
    const h = await createHarness(store.env);
    try {
      const worker = await h.startWorker();
      const acct = await h.account(1000);
      const id = await h.transcript(acct, { uploadId: await uploadRow(h, acct.accountId) });
      await h.enqueue(id);
      await waitFor(() => store.connections > 0, {
        timeout: 10_000,
        message: 'the fetch to reach the store',
      });
      expect(await cancelTranscript(h.db, id)).toBe(true);
      const canceledAt = Date.now();
      await h.publishCancel(id);
      await waitFor(async () => (await h.transcribeQueue.getJobState(id)) === 'completed', {
        timeout: 10_000,
        message: 'the job to end',
      });
      expect(Date.now() - canceledAt).toBeLessThan(3000);
      expect((await h.transcribeQueue.getJob(id))?.returnvalue).toBe('canceled');
      expect(worker.active.size).toBe(0);
      expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
    } finally {
      await h.close();
      await store.close();
    }
  });
});
