import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  type RunningApi,
  type TestAccount,
  checkAccountInvariants,
  createTestAccount,
  waitFor,
} from '@hark/testing';
import { testEnv, workerTest } from './worker-test-env';

// Issue 15, item 5: one account's backlog must not delay another account's next job by more
// than one job per worker. The built API and worker as real processes (two concurrent jobs),
// whisper-cli with the tiny test model on an 11 s file (about 2-3 s a job here).
jest.setTimeout(120_000);

const tinyModel = path.resolve(path.dirname(testEnv.whisperModel), 'for-tests-ggml-tiny.bin');
const h = workerTest({
  WHISPER_MODEL: tinyModel,
  WHISPER_THREADS: '1',
  HARK_WORKER_CONCURRENCY: '2',
  HARK_RATE_LIMIT_TRANSCRIPTS: '100000',
  HARK_RATE_LIMIT_UPLOADS: '100000',
  HARK_RATE_LIMIT_OTHER: '100000',
  PORT: '0',
  HOST: '127.0.0.1',
});
let api: RunningApi;
beforeAll(async () => {
  api = await h.startApi();
  await h.startProcess();
});

const call = (acct: TestAccount, method: string, p: string, body?: Buffer | object) =>
  api.call<{ id: string }>(method, p, acct.auth, body);

async function createFromUpload(acct: TestAccount, audio: Buffer): Promise<string> {
  const up = await call(acct, 'POST', '/uploads', audio);
  expect(up.status).toBe(201);
  const t = await call(acct, 'POST', '/transcripts', { uploadId: up.body.data.id });
  expect(t.status).toBe(201);
  return t.body.data.id;
}

const startedOf = async (accountId: string) =>
  h.db.transcript.findMany({
    where: { accountId, startedAt: { not: null } },
    select: { id: true, startedAt: true, status: true },
  });

it("an account's 40 queued transcripts delay another account's new one by at most one job", async () => {
  const audio = readFileSync(testEnv.jfkWav);
  // Topped up: no concurrency limit on A.
  const a = await createTestAccount(h.db, testEnv.secret, { toppedUp: true, credits: 10_000 });
  const b = await createTestAccount(h.db, testEnv.secret, { toppedUp: true, credits: 100 });
  const aIds: string[] = [];
  for (let i = 0; i < 40; i++) aIds.push(await createFromUpload(a, audio));

  // Alone, A keeps both worker slots busy, with one more job waiting in the queue and the rest
  // held in Postgres.
  await waitFor(
    async () =>
      (await h.db.transcript.count({
        where: { accountId: a.accountId, status: 'processing', startedAt: { not: null } },
      })) >= 2,
    { timeout: 60_000, interval: 50, message: 'two A jobs running at once' },
  );
  const waitingBeforeB = await h.transcribeQueue.getWaitingCount();
  const heldBeforeB = await h.db.transcript.count({
    where: { accountId: a.accountId, status: 'processing', queuedAt: null },
  });

  const bId = await createFromUpload(b, audio);
  const afterCreate = new Date();
  // Old behaviour for comparison: B waits behind all 40 (minus those done); stop looking once
  // three A jobs have started after B's create.
  await waitFor(
    async () => {
      const bRow = await h.db.transcript.findUniqueOrThrow({ where: { id: bId } });
      if (bRow.startedAt) return true;
      return (await startedOf(a.accountId)).filter((t) => t.startedAt! > afterCreate).length >= 3;
    },
    { timeout: 90_000, interval: 50, message: "B's job to start" },
  );
  const bStarted = (await h.db.transcript.findUniqueOrThrow({ where: { id: bId } })).startedAt;
  const aStarted = await startedOf(a.accountId);
  const aBetween = aStarted.filter(
    (t) => t.startedAt! > afterCreate && (!bStarted || t.startedAt! < bStarted),
  );
  expect(bStarted).not.toBeNull();
  // At most the one A job that was waiting ahead of B in the queue.
  expect(aBetween.length).toBeLessThanOrEqual(1);
  // Before B came: one A job waiting in the queue (two running), the rest held in Postgres.
  expect(waitingBeforeB).toBeLessThanOrEqual(1);
  expect(heldBeforeB).toBeGreaterThanOrEqual(30);

  // The rest of A's backlog, held in Postgres or waiting, cancels through the API.
  const processing = await h.db.transcript.findMany({
    where: { accountId: a.accountId, status: 'processing' },
    select: { id: true, queuedAt: true },
  });
  expect(processing.filter((t) => t.queuedAt === null).length).toBeGreaterThan(20);
  for (const t of processing) {
    const r = await call(a, 'POST', `/transcripts/${t.id}/cancel`);
    expect([200, 409]).toContain(r.status); // 409: it finished meanwhile
  }
  await waitFor(
    async () =>
      (await h.db.transcript.count({
        where: { accountId: { in: [a.accountId, b.accountId] }, status: 'processing' },
      })) === 0,
    { timeout: 60_000, interval: 100, message: 'everything finished or canceled' },
  );
  expect(await checkAccountInvariants(h.db, a.accountId)).toEqual([]);
  expect(await checkAccountInvariants(h.db, b.accountId)).toEqual([]);
  expect(await h.db.transcript.findUniqueOrThrow({ where: { id: bId } })).toMatchObject({ status: 'done' });
});
