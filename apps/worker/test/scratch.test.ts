import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type AppProcess, checkAccountInvariants, waitFor, whisperPids } from '@hark/testing';
import { serveFiles, testEnv, workerTest } from './worker-test-env';

// The worker's scratch folder (HARK_TMP_DIR): what a killed worker leaves there (the customer's
// audio, the decoded WAV, the engine's output) is removed by the job's next run and by any worker
// that starts on the folder, never while a live job holds it; and one job's scratch space is
// bounded (HARK_JOB_SCRATCH_BYTES).
jest.setTimeout(180_000);

const scratch = mkdtempSync(path.join(tmpdir(), 'hark-worker-scratch-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// A dead worker's job is found again after about the lock time plus one stalled check.
const FAST_STALL = { HARK_JOB_LOCK_MS: '1000', HARK_STALLED_INTERVAL_MS: '500', HARK_METRICS_PORT: '0' };

const whisperRunning = (id: string) =>
  waitFor(() => (whisperPids(id).length > 0 ? whisperPids(id) : null), {
    timeout: 30_000,
    message: 'whisper-cli running',
  });

/** The entries of `dir` that belong to transcript `id` (its job folders and their marks). */
const entriesOf = (dir: string, id: string) => readdirSync(dir).filter((n) => n.includes(id));

describe('what a killed worker leaves', () => {
  const h = workerTest(FAST_STALL);
  // Each test's workers end with it: a worker left running by a failed test would take the next one's jobs.
  const started: AppProcess[] = [];
  const startProcess = async (env: Record<string, string> = {}) => {
    const p = await h.startProcess(env);
    started.push(p);
    return p;
  };
  afterEach(async () => {
    for (const p of started) p.kill('SIGKILL');
    await Promise.all(started.splice(0).map((p) => p.exited));
  });

  it('a re-run that finds the transcript finished still removes what its killed predecessor left', async () => {
    const a = await startProcess();
    const { acct, id } = await h.submit(readFileSync(testEnv.speech60Wav));
    await h.enqueue(id);
    const pids = await whisperRunning(id);
    // Started while `a` runs the job: the start-up sweep must leave a live job's folder alone.
    const b = await startProcess();
    expect(entriesOf(h.config.tmpDir, id)).not.toEqual([]);
    a.kill('SIGKILL');
    await a.exited;
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    // `a` was killed after its completion committed, before it removed its folder.
    const content = { text: '', words: [], utterances: [], diarizationSegments: null };
    expect(await h.complete(id, content)).toBe(true);

    await waitFor(
      () =>
        b.logs.find((l) => l.msg === 'transcript already finished; nothing to do' && l.transcriptId === id),
      { timeout: 30_000, message: 'the re-run on b' },
    );
    expect(entriesOf(h.config.tmpDir, id)).toEqual([]);
    expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
    b.kill('SIGTERM');
    expect(await b.exited).toBe(0);
  });

  it('a worker starting on the folder removes what a killed worker left, not what a live one holds', async () => {
    const tmp = h.config.tmpDir;
    const a = await startProcess();
    const killed = await h.submit(readFileSync(testEnv.speech60Wav));
    await h.enqueue(killed.id);
    const pids = await whisperRunning(killed.id);
    a.kill('SIGKILL');
    await a.exited;
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    expect(entriesOf(tmp, killed.id)).not.toEqual([]);
    // Its job is taken over by a worker on another host (another scratch folder).
    const elsewhere = await startProcess({ HARK_TMP_DIR: path.join(scratch, 'other-host') });
    await h.finished(killed.id, { timeout: 60_000 });
    elsewhere.kill('SIGTERM');
    await elsewhere.exited;

    // A live worker on the same folder, its job held in the engine (a stand-in that waits).
    const waits = path.join(scratch, 'whisper-cli');
    writeFileSync(waits, '#!/bin/sh\nsleep 60\n');
    chmodSync(waits, 0o755);
    const live = await startProcess({ WHISPER_BIN: waits });
    const held = await h.submit(readFileSync(testEnv.jfkWav));
    await h.enqueue(held.id);
    await live.waitForLog('transcription started', 20_000);
    await waitFor(() => entriesOf(tmp, held.id).length > 0, { message: 'the live job folder' });

    const c = await startProcess();
    expect(entriesOf(tmp, killed.id)).toEqual([]);
    expect(entriesOf(tmp, held.id)).not.toEqual([]);
    // Nothing else of the killed run either (the engine's run folder), and the model cache stays.
    expect(readdirSync(tmp).filter((n) => !n.includes(held.id))).toEqual(['models']);
    c.kill('SIGTERM');
    live.kill('SIGKILL');
    await Promise.all([c.exited, live.exited]);
  });
});

describe('the scratch budget (HARK_JOB_SCRATCH_BYTES)', () => {
  const BUDGET = 500_000;
  const h = workerTest({ HARK_JOB_SCRATCH_BYTES: String(BUDGET) });
  let server: Awaited<ReturnType<typeof serveFiles>>;
  const mp3 = path.join(scratch, 'jfk.mp3');
  beforeAll(async () => {
    const ff = spawnSync('ffmpeg', ['-v', 'error', '-y', '-i', testEnv.jfkWav, '-b:a', '48k', mp3]);
    if (ff.status !== 0) throw new Error(ff.stderr.toString());
    server = await serveFiles({
      '/jfk.wav': readFileSync(testEnv.jfkWav),
      '/jfk.mp3': readFileSync(mp3),
      '/speech-60s.wav': readFileSync(testEnv.speech60Wav),
    });
  });
  afterAll(() => server.close());

  /** Failed once, at once, `audio_too_large` for the working space: nothing charged, hold released. */
  async function expectRefused(id: string, accountId: string) {
    const t = await h.finished(id);
    expect(t).toMatchObject({ status: 'failed', errorCode: 'audio_too_large', workerAttempts: 1 });
    expect(t.errorMessage).toMatch(/working space/);
    expect(t.cost.toString()).toBe('0');
    expect(t.reserved.toString()).toBe('0');
    expect(t.usage).toBeNull();
    expect(await checkAccountInvariants(h.db, accountId)).toEqual([]);
    expect(readdirSync(h.config.tmpDir).filter((n) => n.includes(id))).toEqual([]);
  }

  beforeAll(async () => {
    await h.startWorker();
  });

  it('a download larger than the budget stops at the budget: audio_too_large, not charged', async () => {
    const acct = await h.account();
    const id = await h.transcript(acct, { url: server.url('/speech-60s.wav') });
    await h.enqueue(id);
    await expectRefused(id, acct.accountId);
  });

  it('a source that fits but whose decoded WAV would pass the budget fails before the decode', async () => {
    // 352 KB downloaded + 352 KB of WAV > 500 KB.
    const acct = await h.account();
    const id = await h.transcript(acct, { url: server.url('/jfk.wav') });
    await h.enqueue(id);
    await expectRefused(id, acct.accountId);
  });

  it('within the budget: done (an upload linked from the store counts nothing)', async () => {
    const acct = await h.account();
    const byUrl = await h.transcript(acct, { url: server.url('/jfk.mp3') });
    const uploaded = await h.upload(acct, readFileSync(testEnv.jfkWav));
    const byUpload = await h.transcript(acct, { uploadId: uploaded });
    await h.enqueue(byUrl);
    await h.enqueue(byUpload);
    expect((await h.finished(byUrl)).status).toBe('done');
    expect((await h.finished(byUpload)).status).toBe('done');
    expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
  });
});
