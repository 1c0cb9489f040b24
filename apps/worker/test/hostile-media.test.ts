import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pcmWav, wavSizeLimit } from '@hark/media';
import { type TestAccount, checkAccountInvariants, waitFor } from '@hark/testing';
import { serveFiles, testEnv, workerTest } from './worker-test-env';

// Issue 15, "Hostile media", through the real worker: uploads and URLs whose bytes ask ffmpeg to
// read other files, or to decode far more than they declare. Each must fail at once (one
// attempt, nothing charged, the hold released) without reading what it names or filling the
// disk. The files are made here; a small longest-audio limit keeps the honest decodes cheap.
jest.setTimeout(90_000);

const MAX_AUDIO_SECONDS = 5;
// Retries fast, so a failure wrongly counted as transient shows as 3 attempts, not a time-out.
const FAST_RETRY = { backoff: { type: 'fixed', delay: 50 } };

const h = workerTest({ HARK_MAX_AUDIO_SECONDS: String(MAX_AUDIO_SECONDS) });
let server: Awaited<ReturnType<typeof serveFiles>>;
const scratch = mkdtempSync(path.join(tmpdir(), 'hark-worker-hostile-'));
const secretMp3 = path.join(scratch, 'secret.mp3');
const tone = path.join(scratch, 'tone.wav');
const lyingMkv = path.join(scratch, 'lying.mkv');

function ffmpeg(...args: string[]) {
  const ff = spawnSync('ffmpeg', ['-v', 'error', '-y', ...args]);
  if (ff.status !== 0) throw new Error(`ffmpeg: ${ff.stderr.toString()}`);
}

/** An HLS playlist of one local file, named by its absolute path. */
const playlist = (file: string) =>
  Buffer.from(`#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:2.0,\n${file}\n#EXT-X-ENDLIST\n`);

/** A PCM WAV header declaring 2^31 - 1 samples per second, then 1 s of 16 kHz silence. */
function absurdRateWav(): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + 32_000, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(2 ** 31 - 1, 24);
  header.writeUInt32LE(0xfffffffe, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(32_000, 40);
  return Buffer.concat([header, Buffer.alloc(32_000)]);
}

beforeAll(async () => {
  ffmpeg('-f', 'lavfi', '-i', 'sine=frequency=300:duration=2', secretMp3);
  ffmpeg('-f', 'lavfi', '-i', 'sine=frequency=440:duration=2', tone);
  // An hour of silence (FLAC of zeros: cheap) whose Matroska header says it lasts 1 s.
  ffmpeg('-f', 'lavfi', '-i', 'anullsrc=r=8000:cl=mono', '-t', '3600', '-c:a', 'flac', lyingMkv);
  const mkv = readFileSync(lyingMkv);
  const at = mkv.indexOf(Buffer.from([0x44, 0x89, 0x88])); // Segment Info: Duration, 8-byte float
  if (at < 0) throw new Error('no Duration element');
  mkv.writeDoubleBE(1000, at + 3); // milliseconds
  // And the audio track's own length (its DURATION tag, which the probe reads first).
  const tag = mkv.indexOf('01:00:00.000000000');
  if (tag < 0) throw new Error('no DURATION tag');
  mkv.write('00:00:01.000000000', tag, 'ascii');
  writeFileSync(lyingMkv, mkv);
  server = await serveFiles({ '/list.m3u8': playlist(secretMp3) });
  await h.startWorker();
});

afterAll(async () => {
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** Bytes under `dir`, links counted as links (an upload is linked into the job's folder). */
async function bytesUnder(dir: string): Promise<number> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  let total = 0;
  for (const entry of entries) {
    const at = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await bytesUnder(at);
    else
      total += await lstat(at).then(
        (s) => s.size,
        () => 0,
      );
  }
  return total;
}

/**
 * Samples the worker's scratch folder every 10 ms while `run` goes on and returns the most it
 * saw: a lower bound of the real peak, enough to catch a decode of minutes or hours.
 */
async function peakScratchBytes(run: () => Promise<void>): Promise<number> {
  let peak = 0;
  let done = false;
  const sampler = (async () => {
    while (!done) {
      peak = Math.max(peak, await bytesUnder(h.config.tmpDir));
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  try {
    await run();
  } finally {
    done = true;
    await sampler;
  }
  return peak;
}

/** Failed once, at once: nothing charged, hold released, no content, the job not retried. */
async function expectFailedOnce(id: string, accountId: string, code: string) {
  const t = await h.finished(id);
  expect(t).toMatchObject({ status: 'failed', errorCode: code, workerAttempts: 1, durationSeconds: 0 });
  expect(t.cost.toString()).toBe('0');
  expect(t.reserved.toString()).toBe('0');
  expect(t.content).toBeNull();
  expect(t.usage).toBeNull();
  expect(t.errorMessage).not.toMatch(/\/|ffmpeg|ffprobe|whitelist/);
  const account = await h.db.account.findUniqueOrThrow({ where: { id: accountId } });
  expect(account.total.toString()).toBe('1000');
  expect(account.reserved.toString()).toBe('0');
  expect(await checkAccountInvariants(h.db, accountId)).toEqual([]);
  await waitFor(async () => (await h.transcribeQueue.getJobState(id)) === 'failed', {
    message: 'job failed in BullMQ',
  });
  expect((await h.transcribeQueue.getJob(id))?.attemptsMade).toBe(1);
  return t;
}

async function uploadAndRun(bytes: Buffer, acct?: TestAccount) {
  const account = acct ?? (await h.account(1000));
  const uploadId = await h.upload(account, bytes);
  const id = await h.transcript(account, { uploadId });
  await h.enqueue(id, FAST_RETRY);
  return { id, accountId: account.accountId };
}

it("an ffconcat upload naming another account's upload fails audio_invalid, and nothing of it is read", async () => {
  const victim = await h.account(1000);
  const victimUpload = await h.upload(victim, readFileSync(testEnv.jfkWav));
  const { id, accountId } = await uploadAndRun(Buffer.from(`ffconcat version 1.0\nfile ${victimUpload}\n`));
  const t = await expectFailedOnce(id, accountId, 'audio_invalid');
  expect(t.errorMessage).toBe('The audio could not be decoded.');
  expect(t.language).toBeNull();
});

it('a concat bomb (one short upload listed 3,700 times) fails audio_invalid at once, writing nearly nothing', async () => {
  const acct = await h.account(1000);
  const short = await h.upload(acct, readFileSync(tone));
  const bomb = Buffer.from(`ffconcat version 1.0\n${`file ${short}\nduration 0.001\n`.repeat(3700)}`);
  expect(bomb.length).toBeGreaterThan(100_000);
  let id = '';
  const started = Date.now();
  const peak = await peakScratchBytes(async () => {
    ({ id } = await uploadAndRun(bomb, acct));
    await h.finished(id);
  });
  await expectFailedOnce(id, acct.accountId, 'audio_invalid');
  expect(Date.now() - started).toBeLessThan(15_000);
  // The upload is linked, not copied, and nothing is decoded: a few hundred bytes at most.
  expect(peak).toBeLessThan(64 * 1024);
});

it('audio far longer than its header says fails audio_too_long once the decode reaches the cap, never past it', async () => {
  let job = { id: '', accountId: '' };
  const peak = await peakScratchBytes(async () => {
    job = await uploadAndRun(readFileSync(lyingMkv));
    await h.finished(job.id);
  });
  const t = await expectFailedOnce(job.id, job.accountId, 'audio_too_long');
  expect(t.errorMessage).toBe(
    `The audio is more than ${MAX_AUDIO_SECONDS} seconds long; the longest accepted is ${MAX_AUDIO_SECONDS} seconds.`,
  );
  // One hour decodes to 115 MB; capped, the WAV stops at 6 s (192 KB).
  expect(peak).toBeLessThanOrEqual(wavSizeLimit(MAX_AUDIO_SECONDS) + 4096);
});

describe('an HLS playlist naming a local file fails audio_invalid', () => {
  it('as an upload', async () => {
    const { id, accountId } = await uploadAndRun(playlist(secretMp3));
    await expectFailedOnce(id, accountId, 'audio_invalid');
  });

  it('downloaded from a url', async () => {
    const acct = await h.account(1000);
    const id = await h.transcript(acct, { url: server.url('/list.m3u8') });
    await h.enqueue(id, FAST_RETRY);
    await expectFailedOnce(id, acct.accountId, 'audio_invalid');
  });
});

it('a WAV header with an absurd sample rate fails audio_invalid on the first attempt, not engine_failed after three', async () => {
  const { id, accountId } = await uploadAndRun(absurdRateWav());
  const t = await expectFailedOnce(id, accountId, 'audio_invalid');
  expect(t.errorMessage).toBe('The audio has an unsupported sample rate.');
});

it('an honest upload still transcribes (read through the link in the job folder)', async () => {
  const { id } = await uploadAndRun(readFileSync(tone));
  const t = await h.finished(id);
  expect(t).toMatchObject({ status: 'done', durationSeconds: 2 });
});

// The audit of crafted files: valid audio that failed, or was billed for hours, because of what
// surrounds it. Each must finish on the first attempt.
describe('valid audio in a hostile wrapping', () => {
  /** Done on the first attempt, charged for `seconds`. */
  async function expectDoneOnce(bytes: Buffer, seconds: number) {
    const { id } = await uploadAndRun(bytes);
    const t = await h.finished(id);
    expect(t).toMatchObject({ status: 'done', errorCode: null, workerAttempts: 1, durationSeconds: seconds });
    return t;
  }

  /** A 16 kHz mono 16-bit PCM WAV of these samples. */
  const samplesWav = (samples: number[]) => {
    const data = Buffer.alloc(samples.length * 2);
    samples.forEach((s, i) => data.writeInt16LE(s, i * 2));
    return pcmWav(data);
  };

  it('an MP3 behind 36 MB of ID3 tags transcribes (ffprobe printed them past its stdout limit: engine_failed x3)', async () => {
    const frame = (i: number) => {
      const text = Buffer.concat([Buffer.from(`\0key${i}\0`, 'latin1'), Buffer.alloc(9_000_000, 'A')]);
      const head = Buffer.alloc(10);
      head.write('TXXX', 0, 'ascii');
      head.writeUInt32BE(text.length, 4);
      return Buffer.concat([head, text]);
    };
    const body = Buffer.concat([0, 1, 2, 3].map(frame));
    const head = Buffer.from([0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0, 0]);
    for (let i = 0; i < 4; i++) head[9 - i] = (body.length >> (7 * i)) & 0x7f; // synchsafe
    const mp3 = path.join(scratch, 'plain.mp3');
    ffmpeg('-f', 'lavfi', '-i', 'sine=frequency=440:duration=2', '-id3v2_version', '0', mp3);
    await expectDoneOnce(Buffer.concat([head, body, readFileSync(mp3)]), 2);
  });

  it('Matroska audio of 2 s with a subtitle cue at 10:30:00 is charged 2 s (not failed audio_too_long)', async () => {
    const srt = path.join(scratch, 'late.srt');
    const mkv = path.join(scratch, 'latesub.mkv');
    writeFileSync(srt, '1\n10:30:00,000 --> 10:30:01,000\nlate\n');
    ffmpeg(
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=440:duration=2',
      '-i',
      srt,
      '-c:a',
      'libopus',
      '-c:s',
      'srt',
      mkv,
    );
    await expectDoneOnce(readFileSync(mkv), 2);
  });

  it('a FLAC whose header claims an hour (of 2 s) is done, charged 2 s, even on an account an hour would overdraw', async () => {
    // STREAMINFO's total-sample count is the file's own claim; corrupted or patched, it failed
    // the file audio_too_long (or insufficient_balance) before anything was decoded.
    const flacPath = path.join(scratch, 'claim.flac');
    ffmpeg('-f', 'lavfi', '-i', 'sine=frequency=440:duration=2', '-ar', '16000', flacPath);
    const flac = Buffer.from(readFileSync(flacPath));
    const packed = flac.readBigUInt64BE(18); // sample rate (20 bits), channels, bits, total samples (36)
    const total = BigInt(3600) * (packed >> 44n);
    flac.writeBigUInt64BE((packed & ~((1n << 36n) - 1n)) | total, 18);
    // One cent: 2 s cost 0.02 cents, an hour 36.
    const poor = await h.account('1');
    const { id } = await uploadAndRun(flac, poor);
    const t = await h.finished(id);
    expect(t).toMatchObject({ status: 'done', errorCode: null, workerAttempts: 1, durationSeconds: 2 });
    expect(await checkAccountInvariants(h.db, poor.accountId)).toEqual([]);
  });

  it('a WAV of one sample is done with empty text on the first attempt (whisper-cli exited 10: engine_failed x3)', async () => {
    const t = await expectDoneOnce(samplesWav([1000]), 1);
    expect(t.content).toMatchObject({ text: '' });
  });
});
