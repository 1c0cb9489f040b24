import { readFileSync, readdirSync } from 'node:fs';
import { cancelTranscript } from '@hark/transcripts';
import { checkAccountInvariants, waitFor, whisperPids } from '@hark/testing';
import { testEnv, workerTest } from './worker-test-env';

jest.setTimeout(60_000);

const h = workerTest();
beforeAll(async () => {
  await h.startWorker();
});

describe('cancel', () => {
  it('mid-transcription: whisper-cli is gone within 1 s, the job ends quietly, nothing is charged', async () => {
    const acct = await h.account(1000);
    const uploadId = await h.upload(acct, readFileSync(testEnv.speech60Wav));
    const id = await h.transcript(acct, { uploadId, webhookUrl: 'https://hooks.example.com/x' });
    await h.enqueue(id);
    // The engine's command line holds the job's scratch folder, named after the transcript.
    const pids = await waitFor(() => (whisperPids(id).length > 0 ? whisperPids(id) : null), {
      timeout: 30_000,
      message: 'whisper-cli running for the transcript',
    });
    const held = await h.row(id);
    expect(held.reserved.toString()).toBe('0.6'); // 60 s at 36 cents/h: the real duration's hold

    // What the API's cancel does: the transition (releases the hold), then the broadcast.
    expect(await cancelTranscript(h.db, id)).toBe(true);
    const canceledAt = Date.now();
    await h.publishCancel(id);
    await waitFor(() => pids.every((pid) => whisperPids(id).every((p) => p !== pid)), {
      timeout: 1000,
      interval: 10,
      message: 'whisper-cli to be gone',
    });
    console.log(`cancel: whisper-cli gone ${Date.now() - canceledAt} ms after the cancel`);

    await waitFor(async () => (await h.transcribeQueue.getJobState(id)) === 'completed', {
      message: 'job to end',
    });
    expect((await h.transcribeQueue.getJob(id))?.returnvalue).toBe('canceled');
    const t = await h.row(id);
    expect(t).toMatchObject({
      status: 'canceled',
      errorCode: null,
      errorMessage: null,
      durationSeconds: 0,
      content: null,
      usage: null,
    });
    expect(t.cost.toString()).toBe('0');
    expect(t.reserved.toString()).toBe('0');
    const account = await h.db.account.findUniqueOrThrow({ where: { id: acct.accountId } });
    expect(account.total.toString()).toBe('1000');
    expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
    // No completion notice for a cancel, and the scratch folder is gone.
    expect(await h.webhookQueue.getJob(`${id}-attempt-1`)).toBeUndefined();
    expect(h.doneMessages).not.toContain(id);
    expect(readdirSync(h.config.tmpDir).filter((n) => n.includes(id))).toEqual([]);
  });
});
