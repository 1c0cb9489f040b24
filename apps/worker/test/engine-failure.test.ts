import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { QUEUES, bullPrefix } from '@hark/queue';
import { type TestAccount, checkAccountInvariants, waitFor } from '@hark/testing';
import { Worker } from 'bullmq';
import { type TestHarness, createHarness, testEnv } from './worker-test-env';

// Retries and the failures that end them. The retry back-off is shrunk through the job options
// (the producer's side); the worker's behaviour is what runs in production.
jest.setTimeout(60_000);

const FAST_RETRY = { backoff: { type: 'fixed', delay: 50 } };
const scratch = mkdtempSync(path.join(tmpdir(), 'hark-worker-fixtures-'));
const tone = path.join(scratch, 'tone.wav');
const harnesses: TestHarness[] = [];

beforeAll(() => {
  const ff = spawnSync('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=300:duration=3',
    tone,
  ]);
  if (ff.status !== 0) throw new Error(ff.stderr.toString());
});

afterAll(async () => {
  await Promise.all(harnesses.map((h) => h.close()));
  rmSync(scratch, { recursive: true, force: true });
});

async function harness(env: Record<string, string>): Promise<TestHarness> {
  const h = await createHarness(env);
  harnesses.push(h);
  await h.startWorker();
  return h;
}

const submit = (h: TestHarness, audio: Buffer) =>
  h.submit(audio, { webhookUrl: 'https://hooks.example.com/x' });

const failedRow = (h: TestHarness, id: string) =>
  waitFor(
    async () => {
      const t = await h.row(id);
      return t.status === 'failed' ? t : null;
    },
    { timeout: 40_000, interval: 100, message: 'transcript failed' },
  );

/** Waits for `id` to fail as `fields` say, with its hold released and the account's books whole. */
async function expectFailed(h: TestHarness, acct: TestAccount, id: string, fields: Record<string, unknown>) {
  const t = await failedRow(h, id);
  expect(t).toMatchObject(fields);
  expect(t.reserved.toString()).toBe('0');
  expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
  return t;
}

describe.each([
  ['WHISPER_BIN=/bin/false', { WHISPER_BIN: '/bin/false' }],
  ['a model file that does not exist', { WHISPER_MODEL: '/nonexistent/ggml-base.en.bin' }],
])('broken engine (%s)', (_name, env) => {
  it('retries every attempt, then fails engine_failed with the hold released and nothing charged', async () => {
    const h = await harness(env);
    const { acct, id } = await submit(h, readFileSync(tone));
    await h.enqueue(id, FAST_RETRY);
    const t = await expectFailed(h, acct, id, {
      errorCode: 'engine_failed',
      errorMessage: 'Transcription failed after every retry.',
      workerAttempts: 3,
      durationSeconds: 0,
    });
    expect(t.cost.toString()).toBe('0');
    const account = await h.db.account.findUniqueOrThrow({ where: { id: acct.accountId } });
    expect(account.total.toString()).toBe('1000');
    await waitFor(async () => (await h.transcribeQueue.getJobState(id)) === 'failed');
    expect((await h.transcribeQueue.getJob(id))?.attemptsMade).toBe(3);
    expect(await h.webhookQueue.getJob(`${id}-attempt-1`)).toBeDefined();
  });
});

it('audio_too_long: HARK_MAX_AUDIO_SECONDS=5 and the 11 s jfk.wav (fails at the probe, before decoding)', async () => {
  const h = await harness({ HARK_MAX_AUDIO_SECONDS: '5' });
  const { acct, id } = await submit(h, readFileSync(testEnv.jfkWav));
  await h.enqueue(id, FAST_RETRY);
  await expectFailed(h, acct, id, {
    errorCode: 'audio_too_long',
    errorMessage: 'The audio is 11 seconds long; the longest accepted is 5 seconds.',
    workerAttempts: 1,
  });
});

it('a job that keeps killing workers (stall limit) is failed by BullMQ, and the transcript follows: engine_failed', async () => {
  const h = await createHarness({
    HARK_JOB_LOCK_MS: '1000',
    HARK_STALLED_INTERVAL_MS: '300',
    HARK_MAX_STALLED_COUNT: '0',
  });
  harnesses.push(h);
  const { acct, id } = await submit(h, readFileSync(tone));
  // A stand-in worker takes the job and "dies": it never renews the lock nor finishes.
  const connection = h.redis.duplicate();
  const doomed = new Worker(QUEUES.transcribe, null, {
    connection,
    prefix: bullPrefix(h.config.redisPrefix),
    lockDuration: 1000,
    autorun: false,
  });
  await h.enqueue(id);
  const taken = await waitFor(() => doomed.getNextJob('dead-worker-token'), {
    message: 'stand-in took the job',
  });
  expect(taken?.id).toBe(id);
  await doomed.close(true);
  await connection.quit();
  // With a stall limit of 0 this one death is already too many.
  await h.startWorker();

  await expectFailed(h, acct, id, { errorCode: 'engine_failed', workerAttempts: 0 });
  expect(await h.transcribeQueue.getJobState(id)).toBe('failed');
  expect((await h.transcribeQueue.getJob(id))?.failedReason).toMatch(/stalled more than allowable limit/);
  await waitFor(() => h.doneMessages.includes(id));
});
