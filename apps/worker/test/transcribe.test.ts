import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkAccountInvariants, waitFor } from '@hark/testing';
import Decimal from 'decimal.js';
import { RATE, SPEAKERS_RATE, serveFiles, testEnv, workerTest } from './worker-test-env';

// Real Postgres, Redis, ffmpeg and whisper-cli with the test model, which transcribes to nothing:
// words and text come back empty, so these tests cover the pipeline, money and failures; word
// content is covered by the unit tests of transcript-content and @hark/media's parser.
jest.setTimeout(90_000);

const h = workerTest();
let server: Awaited<ReturnType<typeof serveFiles>>;
const scratch = mkdtempSync(path.join(tmpdir(), 'hark-worker-fixtures-'));
const jfk = readFileSync(testEnv.jfkWav);
const video = path.join(scratch, 'clip.mp4');

beforeAll(async () => {
  // A video file: 3 s of test pattern with a 3 s tone as its audio track.
  const ff = spawnSync('ffmpeg', [
    ...['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=duration=3:size=160x120:rate=10'],
    ...[
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=3',
      '-c:v',
      'mpeg4',
      '-c:a',
      'aac',
      '-shortest',
      video,
    ],
  ]);
  if (ff.status !== 0) throw new Error(`ffmpeg: ${ff.stderr.toString()}`);
  server = await serveFiles({ '/jfk.wav': jfk, '/random.bin': randomBytes(50_000) });
  await h.startWorker();
});

afterAll(async () => {
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
});

const finished = (id: string) => h.finished(id);

const cost = (seconds: number, rate: string) =>
  new Decimal(seconds).times(rate).dividedBy(3600).toDecimalPlaces(10).toString();

describe('transcribe job: done', () => {
  it('an upload of jfk.wav: done, charged exactly duration x rate / 3600, hold released, announced', async () => {
    const acct = await h.account(1000);
    const uploadId = await h.upload(acct, jfk, { sha256: sha(jfk) });
    const id = await h.transcript(acct, { uploadId, glossary: { fellow: 'Fellow' } });
    const created = Date.now();
    await h.enqueue(id);
    const t = await finished(id);
    console.log(`jfk.wav (11 s) upload: create-to-done ${Date.now() - created} ms`);

    expect(t).toMatchObject({
      status: 'done',
      language: 'en',
      model: 'whisper-base.en',
      durationSeconds: 11,
      speakerCount: null,
      errorCode: null,
      workerAttempts: 1,
    });
    expect(t.audioSeconds).toBeCloseTo(11, 1);
    expect(t.startedAt).not.toBeNull();
    expect(t.finishedAt).not.toBeNull();
    expect(t.content).toMatchObject({ text: '', words: [], utterances: [], diarizationSegments: null });
    expect(t.cost.toString()).toBe(cost(11, RATE));
    expect(t.reserved.toString()).toBe('0');
    expect(t.usage).toMatchObject({ seconds: 11 });
    expect(t.usage!.cost.toString()).toBe(cost(11, RATE));
    const account = await h.db.account.findUniqueOrThrow({ where: { id: acct.accountId } });
    expect(account.total.toString()).toBe(new Decimal(1000).minus(cost(11, RATE)).toString());
    expect(account.reserved.toString()).toBe('0');
    expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
    await waitFor(() => h.doneMessages.includes(id), { message: 'done published' });
    // No webhookUrl: no notice queued.
    expect(await h.webhookQueue.getJob(`${id}-attempt-1`)).toBeUndefined();
    // BullMQ marks the job completed just after the handler returns (the row is done first).
    await waitFor(async () => (await (await h.transcribeQueue.getJob(id))?.getState()) === 'completed', {
      timeout: 5000,
      message: 'the job to be completed',
    });
  });

  it('a url with speakers: downloaded, diarized next to whisper, speaker rate charged, webhook attempt 1 queued', async () => {
    const acct = await h.account(1000);
    const id = await h.transcript(acct, {
      url: server.url('/jfk.wav'),
      speakers: true,
      webhookUrl: 'https://hooks.example.com/hark',
    });
    await h.enqueue(id);
    const t = await finished(id);

    expect(t).toMatchObject({ status: 'done', durationSeconds: 11, speakerCount: 1 });
    expect(t.cost.toString()).toBe(cost(11, SPEAKERS_RATE));
    const segments = t.content!.diarizationSegments as { start: number; end: number; speakers: string[] }[];
    expect(segments.length).toBeGreaterThan(0);
    expect(new Set(segments.flatMap((s) => s.speakers))).toEqual(new Set(['A']));
    expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
    const webhook = await h.webhookQueue.getJob(`${id}-attempt-1`);
    expect(webhook?.data).toEqual({ transcriptId: id, attempt: 1 });
    // The scratch folder (download, decoded WAV) is gone once the job has finished: the job
    // removes it after announcing, so right after the announcement it may still be there.
    await waitFor(async () => (await h.transcribeQueue.getJobState(id)) === 'completed');
    expect(readdir(h.config.tmpDir)).toEqual([]);
  });

  it('a video file (mp4): transcribed from its audio track', async () => {
    const acct = await h.account(1000);
    const uploadId = await h.upload(acct, readFileSync(video));
    const id = await h.transcript(acct, { uploadId });
    await h.enqueue(id);
    const t = await finished(id);
    expect(t).toMatchObject({ status: 'done', durationSeconds: 3, language: 'en' });
    expect(t.cost.toString()).toBe(cost(3, RATE));
    expect(await checkAccountInvariants(h.db, acct.accountId)).toEqual([]);
  });

  it('a job for a transcript no longer processing, or gone, does nothing', async () => {
    const acct = await h.account(1000);
    const id = await h.transcript(acct, { url: server.url('/jfk.wav') });
    await h.db.transcript.update({ where: { id }, data: { status: 'canceled', reserved: 0 } });
    await h.db.account.update({ where: { id: acct.accountId }, data: { reserved: 0 } });
    await h.enqueue(id);
    await h.enqueue('tr_doesnotexist');
    await waitFor(async () => (await h.transcribeQueue.getJobState(id)) === 'completed');
    expect((await h.transcribeQueue.getJob(id))?.returnvalue).toBe('already_finished');
    expect((await h.row(id)).workerAttempts).toBe(0);
    await waitFor(async () => (await h.transcribeQueue.getJob('tr_doesnotexist'))?.returnvalue === 'missing');
  });
});

describe('transcribe job: failures (permanent, no retry, nothing charged)', () => {
  async function expectFailed(id: string, accountId: string, code: string) {
    const t = await finished(id);
    expect(t).toMatchObject({ status: 'failed', errorCode: code, durationSeconds: 0, speakerCount: null });
    expect(t.cost.toString()).toBe('0');
    expect(t.reserved.toString()).toBe('0');
    expect(t.content).toBeNull();
    expect(t.usage).toBeNull();
    // User-facing: no paths, hosts or tool output.
    expect(t.errorMessage).toMatch(/^[A-Z].*\.$/);
    expect(t.errorMessage).not.toMatch(/\/|127\.0\.0\.1|ffprobe|whisper|Error:/);
    const account = await h.db.account.findUniqueOrThrow({ where: { id: accountId } });
    expect(account.reserved.toString()).toBe('0');
    expect(await checkAccountInvariants(h.db, accountId)).toEqual([]);
    await waitFor(async () => (await h.transcribeQueue.getJobState(id)) === 'failed', {
      message: 'job failed in BullMQ',
    });
    expect((await h.transcribeQueue.getJob(id))?.attemptsMade).toBe(1);
    await waitFor(() => h.doneMessages.includes(id), { message: 'failure published' });
    return t;
  }

  it('audio_unreachable: the url answers 404 (webhook attempt 1 queued for failures too)', async () => {
    const acct = await h.account();
    const id = await h.transcript(acct, {
      url: server.url('/missing.wav'),
      webhookUrl: 'https://hooks.example.com/x',
    });
    await h.enqueue(id);
    const t = await expectFailed(id, acct.accountId, 'audio_unreachable');
    expect(t.errorMessage).toBe('The audio URL answered with HTTP status 404.');
    expect((await h.webhookQueue.getJob(`${id}-attempt-1`))?.data).toEqual({ transcriptId: id, attempt: 1 });
  });

  it('audio_invalid: random bytes from a url', async () => {
    const acct = await h.account();
    const id = await h.transcript(acct, { url: server.url('/random.bin') });
    await h.enqueue(id);
    await expectFailed(id, acct.accountId, 'audio_invalid');
  });

  it('audio_mismatch: the upload declared another sha256', async () => {
    const acct = await h.account();
    const uploadId = await h.upload(acct, jfk, {
      sha256: sha(Buffer.from('something else')),
    });
    const id = await h.transcript(acct, { uploadId });
    await h.enqueue(id);
    await expectFailed(id, acct.accountId, 'audio_mismatch');
  });

  it('insufficient_balance: the balance does not cover the real duration', async () => {
    // 11 s at 36 cents/h costs 0.11 cents; the account has 0.1.
    const acct = await h.account('0.1');
    const uploadId = await h.upload(acct, jfk);
    const id = await h.transcript(acct, { uploadId });
    await h.enqueue(id);
    await expectFailed(id, acct.accountId, 'insufficient_balance');
    const account = await h.db.account.findUniqueOrThrow({ where: { id: acct.accountId } });
    expect(account.total.toString()).toBe('0.1');
  });
});

function sha(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

function readdir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
