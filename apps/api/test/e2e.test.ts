import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createDb } from '@hark/db';
import {
  type AppProcess,
  REPO_ROOT,
  checkAccountInvariants,
  createTestAccount,
  startApp,
  waitFor,
} from '@hark/testing';

// The whole stack as operators run it: built API and worker processes, real Postgres, Redis,
// ffmpeg and whisper-cli (the test model: it transcribes to nothing, so text is empty).
const shared = path.resolve(REPO_ROOT, '../shared');
const db = createDb({ databaseUrl: process.env.DATABASE_URL!, poolSize: 2 });
let api: AppProcess;
let worker: AppProcess;
let base: string;
let scratch: string;

beforeAll(async () => {
  const storage = await mkdtemp(path.join(tmpdir(), 'hark-e2e-'));
  scratch = path.join(storage, 'tmp');
  const env = {
    PORT: '0',
    HARK_STORAGE_DIR: storage,
    HARK_REDIS_PREFIX: `hark-e2e-${process.pid}`,
    WHISPER_BIN: process.env.WHISPER_BIN ?? path.join(REPO_ROOT, '.hark/whisper/bin/whisper-cli'),
    WHISPER_MODEL: process.env.WHISPER_MODEL ?? path.join(shared, 'models/for-tests-ggml-base.en.bin'),
    HARK_RETENTION_SWEEP_MS: '0',
    HARK_TMP_DIR: scratch,
  };
  api = startApp('api', env);
  worker = startApp('worker', env);
  base = `http://127.0.0.1:${(await api.waitForLog('api listening')).port as number}/v1`;
  await worker.waitForLog('worker ready', 30_000);
});
afterAll(async () => {
  api.kill('SIGTERM');
  worker.kill('SIGTERM');
  expect(await api.exited).toBe(0);
  expect(await worker.exited).toBe(0);
  await db.$disconnect();
});

async function call(method: string, p: string, auth: Record<string, string>, body?: unknown) {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { ...auth, ...(body && !Buffer.isBuffer(body) ? { 'Content-Type': 'application/json' } : {}) },
    ...(body ? { body: Buffer.isBuffer(body) ? body : JSON.stringify(body) } : {}),
  });
  return {
    status: res.status,
    headers: res.headers,
    body: (await res.json()) as { data: Record<string, unknown> },
  };
}

async function whisperPids(): Promise<number[]> {
  const pids: number[] = [];
  for (const d of await readdir('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const cmd = await readFile(`/proc/${d}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes('whisper-cli') && cmd.includes(scratch)) pids.push(Number(d));
  }
  return pids;
}

describe('end to end through real processes', () => {
  it('upload -> create with speakers -> wait -> done, exact cost, diarization fields', async () => {
    const acct = await createTestAccount(db, process.env.HARK_SECRET!, { toppedUp: true, credits: 100 });
    const audio = await readFile(path.join(shared, 'audio/jfk.wav'));
    const sha = createHash('sha256').update(audio).digest('hex');
    const up = await call('POST', `/uploads?expectedBytes=${audio.length}&sha256=${sha}`, acct.auth, audio);
    expect(up.status).toBe(201);
    const created = await call('POST', '/transcripts', acct.auth, {
      uploadId: up.body.data.id,
      speakers: true,
      glossary: { hark: 'Hark' },
    });
    expect(created.status).toBe(201);
    const id = created.body.data.id as string;
    let t = created.body.data;
    for (let i = 0; i < 3 && t.status === 'processing'; i++)
      t = (await call('GET', `/transcripts/${id}?wait=60`, acct.auth)).body.data;
    expect(t).toMatchObject({
      status: 'done',
      error: null,
      language: 'en',
      durationSeconds: 11,
      cost: 0.1466666667, // 11 s x 48 cents/h (speakers rate) / 3600, rounded to 10 places
      model: 'whisper-base.en',
      text: expect.any(String),
      words: expect.any(Array),
      utterances: expect.any(Array),
      diarizationSegments: expect.any(Array),
      speakerCount: expect.any(Number),
    });
    const bal = await call('GET', '/balance', acct.auth);
    expect(bal.body.data).toEqual({
      currency: 'USD',
      total: 99.8533333333,
      reserved: 0,
      available: 99.8533333333,
    });
    expect(await checkAccountInvariants(db, acct.accountId)).toEqual([]);
  });

  it('cancel mid-transcription: the engine process is gone within a second, nothing charged', async () => {
    const acct = await createTestAccount(db, process.env.HARK_SECRET!, { toppedUp: true, credits: 100 });
    const audio = await readFile(path.join(shared, 'audio/speech-60s.wav'));
    const up = await call('POST', '/uploads', acct.auth, audio);
    const created = await call('POST', '/transcripts', acct.auth, { uploadId: up.body.data.id });
    const id = created.body.data.id as string;
    const running = await waitFor(
      async () => {
        const p = await whisperPids();
        return p.length > 0 ? p : null;
      },
      { timeout: 30_000, interval: 20, message: 'whisper-cli to start' },
    );
    const t0 = Date.now();
    const canceled = await call('POST', `/transcripts/${id}/cancel`, acct.auth);
    expect(canceled.status).toBe(200);
    expect(canceled.body.data).toMatchObject({ status: 'canceled', error: null, cost: 0 });
    await waitFor(async () => (await whisperPids()).filter((p) => running.includes(p)).length === 0, {
      timeout: 1000,
      interval: 10,
      message: 'whisper-cli to exit',
    });
    expect(Date.now() - t0).toBeLessThan(1000);
    const bal = await call('GET', '/balance', acct.auth);
    expect(bal.body.data).toEqual({ currency: 'USD', total: 100, reserved: 0, available: 100 });
    expect(await checkAccountInvariants(db, acct.accountId)).toEqual([]);
  });
});
