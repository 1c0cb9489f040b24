import { readFileSync } from 'node:fs';
import { checkAccountInvariants, waitFor, whisperPids } from '@hark/testing';
import { testEnv, workerTest } from './worker-test-env';

// The built worker (apps/worker/dist/main.js) as a real process: signals, exit codes, and jobs
// surviving a worker that goes away. Locks and the stalled check are shortened through config.
jest.setTimeout(120_000);

const h = workerTest({ HARK_JOB_LOCK_MS: '2000', HARK_STALLED_INTERVAL_MS: '500' });
const worker = (env: Record<string, string> = {}) => h.startProcess(env);

const whisperRunning = (id: string) =>
  waitFor(() => (whisperPids(id).length > 0 ? whisperPids(id) : null), {
    timeout: 30_000,
    message: 'whisper-cli running',
  });

const submit = (audio: Buffer) => h.submit(audio);

it('SIGTERM while a job runs: the job finishes within the grace period, then exit 0', async () => {
  const w = await worker();
  const { acct, id } = await submit(readFileSync(testEnv.jfkWav));
  await h.enqueue(id);
  await whisperRunning(id);
  w.kill('SIGTERM');
  expect(await w.exited).toBe(0);
  const t = await h.row(id);
  expect(t.status).toBe('done');
  expect(await h.transcribeQueue.getJobState(id)).toBe('completed');
  expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
  const lines = w.logs.filter((l) => l.transcriptId === id).map((l) => l.msg);
  expect(lines).toEqual(expect.arrayContaining(['transcription started', 'transcript done']));
});

it('a retryable failure (audio URL refused) leaves the worker running; the last attempt fails audio_unreachable', async () => {
  // A rejection returned (not awaited) from a try/finally went unhandled while the finally
  // cleaned up, and Node ended the worker on every retryable failure.
  const w = await worker();
  const acct = await h.account(1000);
  const id = await h.transcript(acct, { url: 'http://127.0.0.1:9/gone.wav' });
  await h.enqueue(id, { attempts: 2, backoff: { type: 'fixed', delay: 300 } });
  await w.waitForLog('attempt failed; BullMQ will retry', 20_000);
  await waitFor(async () => (await h.row(id)).status !== 'processing', {
    timeout: 20_000,
    message: 'transcript failed',
  });
  const t = await h.row(id);
  expect([t.status, t.errorCode]).toEqual(['failed', 'audio_unreachable']);
  await new Promise((r) => setTimeout(r, 500));
  expect([w.child.exitCode, w.child.signalCode]).toEqual([null, null]);
  expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
  w.kill('SIGTERM');
  expect(await w.exited).toBe(0);
});

describe('a job outlives the worker that ran it (one 60 s transcript through three workers)', () => {
  let id = '';
  let accountId = '';

  it('SIGTERM past the grace period: the engine is killed, the job handed back to the queue, exit 0', async () => {
    const a = await worker({ HARK_SHUTDOWN_GRACE_MS: '200' });
    ({
      id,
      acct: { accountId },
    } = await submit(readFileSync(testEnv.speech60Wav)));
    await h.enqueue(id);
    const pids = await whisperRunning(id);
    a.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    expect(whisperPids(id).filter((p) => pids.includes(p))).toEqual([]);
    // Straight back to waiting: no attempt or stall counted, the transcript untouched.
    expect(await h.transcribeQueue.getJobState(id)).toBe('waiting');
    expect((await h.transcribeQueue.getJob(id))?.attemptsMade).toBe(0);
    const t = await h.row(id);
    expect(t.status).toBe('processing');
    expect(t.reserved.toString()).toBe('0.6');
    expect(a.logs.map((l) => l.msg)).toContain('job handed back at shutdown');
  });

  it('SIGKILL mid-job: after the lock expires another worker runs it again; done once, charged once', async () => {
    const b = await worker();
    const pids = await whisperRunning(id);
    b.kill('SIGKILL');
    await b.exited;
    // The machine went down with it: its engine process too.
    for (const pid of pids) process.kill(pid, 'SIGKILL');

    const c = await worker();
    const t = await h.finished(id, {
      timeout: 90_000,
      interval: 200,
      message: 'transcript to finish on the third worker',
    });
    expect(t).toMatchObject({ status: 'done', durationSeconds: 60, workerAttempts: 3 });
    expect(t.cost.toString()).toBe('0.6');
    expect(t.usage).toMatchObject({ seconds: 60 });
    const charges = await h.db.ledgerEntry.count({ where: { transcriptId: id, kind: 'charge' } });
    expect(charges).toBe(1);
    expect(await checkAccountInvariants(h.db, accountId)).toEqual([]);
    expect(
      c.logs.some((l) => l.msg === 'job stalled (its worker died); requeued' && l.transcriptId === id),
    ).toBe(true);
    c.kill('SIGTERM');
    expect(await c.exited).toBe(0);
  });
});
