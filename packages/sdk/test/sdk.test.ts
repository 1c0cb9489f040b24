import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { type TestAccount, testAudio, waitFor } from '@hark/testing';
import {
  Hark,
  HarkApiError,
  type Fetch,
  type Transcript,
  type UploadProgress,
  verifySignature,
} from '../src';
import { JFK, sdkStack, startReceiver } from './stack';

// The SDK against the running service: built API, worker and dispatcher processes, real Postgres,
// Redis, ffmpeg and whisper-cli with the test model (empty text; assertions are on shape,
// status and duration).
jest.setTimeout(120_000);

const stack = sdkStack('sdk');
let acct: TestAccount;
let hark: Hark;
let audio: Buffer;
let sha: string;

beforeAll(async () => {
  acct = await stack.account();
  hark = new Hark({ apiKey: acct.apiKey, baseUrl: stack.baseUrl });
  audio = await readFile(JFK);
  sha = createHash('sha256').update(audio).digest('hex');
});

const REQUEST_ID = /^req_[A-Za-z0-9_-]+$/;

function expectDone(t: Transcript) {
  expect(t).toMatchObject({
    status: 'done',
    error: null,
    language: 'en',
    durationSeconds: 11,
    text: expect.any(String),
    words: expect.any(Array),
    utterances: expect.any(Array),
    currency: 'USD',
    model: 'whisper-base.en',
    createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
  });
  expect(t.cost).toBeGreaterThan(0);
}

describe('account', () => {
  it('balance and limits', async () => {
    const fresh = new Hark({
      apiKey: (await stack.account({ credits: 250 })).apiKey,
      baseUrl: stack.baseUrl,
    });
    expect(await fresh.balance()).toEqual({ currency: 'USD', total: 250, reserved: 0, available: 250 });
    const limits = await fresh.limits();
    expect(limits).toMatchObject({
      audio: { maxDurationSeconds: 36_000, formats: expect.arrayContaining(['wav', 'mp3']) },
      upload: { maxBytes: 2 * 1024 ** 3, maxChunkBytes: 16 * 1024 ** 2, maxRequestBytes: 100_000_000 },
      glossary: { maxEntries: 100, maxTermChars: 80 },
      concurrency: { maxRunning: 2 },
      idempotencyKeyMaxChars: 64,
    });
    expect(limits.rateLimits).toContainEqual({
      endpoint: 'POST /v1/transcripts',
      max: 120,
      windowSeconds: 60,
    });
  });

  it('a wrong key is HarkApiError invalid_api_key with the request id', async () => {
    const bad = new Hark({ apiKey: 'tk_' + 'x'.repeat(40), baseUrl: stack.baseUrl });
    const err = (await bad.balance().catch((e: unknown) => e)) as HarkApiError;
    expect(err).toBeInstanceOf(HarkApiError);
    expect(err).toMatchObject({ code: 'invalid_api_key', status: 401, retryable: false, attempts: 1 });
    expect(err.requestId).toMatch(REQUEST_ID);
  });
});

describe('uploads', () => {
  it('a file path in chunks, with expectedBytes, sha256 and progress', async () => {
    const progress: UploadProgress[] = [];
    const up = await hark.upload(JFK, { chunkBytes: 100_000, onProgress: (p) => progress.push(p) });
    expect(up).toMatchObject({ receivedBytes: audio.length, expectedBytes: audio.length, sha256: sha });
    expect(progress.map((p) => p.receivedBytes)).toEqual([0, 100_000, 200_000, 300_000, audio.length]);
    expect(await hark.uploads.get(up.id)).toEqual(up);
  });

  it('a Node Readable and a web ReadableStream', async () => {
    const fromNode = await hark.upload(createReadStream(JFK, { highWaterMark: 10_000 }), {
      chunkBytes: 128 * 1024,
    });
    expect(fromNode).toMatchObject({ receivedBytes: audio.length, expectedBytes: null, sha256: null });
    const web = Readable.toWeb(createReadStream(JFK)) as unknown as ReadableStream<Uint8Array>;
    const fromWeb = await hark.upload(web, { expectedBytes: audio.length, sha256: sha });
    expect(fromWeb).toMatchObject({ receivedBytes: audio.length, expectedBytes: audio.length, sha256: sha });
  });

  it('resumes through a chunk whose answer was lost and one that never arrived: the stored audio is exact', async () => {
    let puts = 0;
    const flaky: Fetch = async (url, init) => {
      if (init.method === 'PUT') {
        puts++;
        if (puts === 2) throw new TypeError('fetch failed'); // never sent
        if (puts === 4) {
          await fetch(url, init); // stored by the service...
          throw new TypeError('fetch failed'); // ...but the answer is lost
        }
      }
      return fetch(url, init);
    };
    const client = new Hark({ apiKey: acct.apiKey, baseUrl: stack.baseUrl, fetch: flaky, baseDelayMs: 10 });
    const up = await client.upload(audio, { chunkBytes: 100_000 });
    expect(puts).toBe(5); // 4 chunks + 1 resend; the chunk whose answer was lost is not sent again
    expect(up).toMatchObject({ receivedBytes: audio.length, sha256: sha });
    // The service checks the declared digest against the stored bytes at transcription.
    const t = await hark.waitForTranscript((await hark.transcripts.create({ uploadId: up.id })).id, {
      timeoutMs: 90_000,
    });
    expectDone(t);
  });

  it('a validation error carries fields', async () => {
    const err = (await hark.uploads.create({ sha256: 'nope' }).catch((e: unknown) => e)) as HarkApiError;
    expect(err).toMatchObject({ code: 'validation', status: 400, fields: { sha256: 'sha256_invalid' } });
  });
});

describe('transcripts', () => {
  it('create -> waitForTranscript -> done; same Idempotency-Key, same transcript', async () => {
    const up = await hark.upload(audio);
    const key = `sdk-it-${up.id}`;
    const created = await hark.transcripts.create(
      { uploadId: up.id, externalId: key, metadata: { team: 'qa' }, glossary: { hark: 'Hark' } },
      { idempotencyKey: key },
    );
    expect(created).toMatchObject({
      status: 'processing',
      text: null,
      durationSeconds: 0,
      cost: 0,
      externalId: key,
      metadata: { team: 'qa' },
    });
    const again = await hark.transcripts.create(
      { uploadId: up.id, externalId: key, metadata: { team: 'qa' }, glossary: { hark: 'Hark' } },
      { idempotencyKey: key },
    );
    expect(again.id).toBe(created.id);
    const done = await hark.waitForTranscript(created.id, { timeoutMs: 90_000 });
    expectDone(done);
    expect(done.speakerCount).toBeNull();
    expect(await hark.transcripts.get(created.id)).toEqual(done);
    const page = await hark.transcripts.list({ externalId: key });
    expect(page).toMatchObject({ total: 1, page: 1, perPage: 20, nextCursor: null });
    expect(page.transcripts[0]).toEqual(
      Object.fromEntries(
        Object.entries(done).filter(
          ([k]) => !['text', 'words', 'utterances', 'diarizationSegments'].includes(k),
        ),
      ),
    );
  });

  it('listAll walks every page by cursor, newest first, without repeats', async () => {
    const own = new Hark({ apiKey: (await stack.account()).apiKey, baseUrl: stack.baseUrl });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const t = await own.transcripts.create({ url: 'http://127.0.0.1:9/a.wav', externalId: 'page' });
      await own.transcripts.cancel(t.id); // nothing to transcribe here
      ids.unshift(t.id);
    }
    const seen: string[] = [];
    for await (const t of own.transcripts.listAll({ perPage: 2, externalId: 'page' })) seen.push(t.id);
    expect(seen).toEqual(ids);
  });

  it('cancel, cancel again (transcript_finished), subtitles (transcript_not_done), delete, then 404 not_found', async () => {
    const up = await hark.upload(testAudio.speech60Wav);
    const t = await hark.transcripts.create({ uploadId: up.id });
    const canceled = await hark.transcripts.cancel(t.id);
    expect(canceled).toMatchObject({ id: t.id, status: 'canceled', error: null, cost: 0 });
    await expect(hark.transcripts.cancel(t.id)).rejects.toMatchObject({
      code: 'transcript_finished',
      status: 409,
    });
    await expect(hark.transcripts.subtitles(t.id, { format: 'vtt' })).rejects.toMatchObject({
      code: 'transcript_not_done',
      status: 409,
      retryable: false,
      attempts: 1,
    });
    await expect(hark.transcripts.delete(t.id)).resolves.toEqual({ id: t.id, deleted: true });
    const err = (await hark.transcripts.get(t.id).catch((e: unknown) => e)) as HarkApiError;
    expect(err).toMatchObject({ code: 'not_found', status: 404 });
    expect(err.requestId).toMatch(REQUEST_ID);
  });

  it('subtitles: 409 while processing, then SRT, WebVTT and text once done', async () => {
    const up = await hark.upload(audio);
    const t = await hark.transcripts.create({ uploadId: up.id });
    // Just created, so still processing: a retryable refusal with Retry-After (seen without retries).
    const once = new Hark({ apiKey: acct.apiKey, baseUrl: stack.baseUrl, maxRetries: 0 });
    await expect(once.transcripts.subtitles(t.id, { format: 'srt' })).rejects.toMatchObject({
      status: 409,
      code: 'transcript_processing',
      retryable: true,
      retryAfterSeconds: expect.any(Number),
    });
    const done = await hark.waitForTranscript(t.id, { timeoutMs: 90_000 });
    const srt = await hark.transcripts.subtitles(t.id, {
      format: 'srt',
      maxLineLength: 42,
      maxCueDuration: 6,
      maxLines: 2,
      speakerLabels: false,
    });
    const vtt = await hark.transcripts.subtitles(t.id, { format: 'vtt' });
    const txt = await hark.transcripts.subtitles(t.id, { format: 'txt' });
    // The test model transcribes to nothing: then the formats' frames without cues.
    const empty = done.words!.length === 0;
    expect(srt).toEqual(empty ? '' : expect.stringMatching(/^1\n00:00:\d\d,\d{3} --> /));
    expect(vtt).toEqual(empty ? 'WEBVTT\n' : expect.stringMatching(/^WEBVTT\n\n00:00:/));
    expect(txt).toBe(done.text === '' ? '' : `${done.text}\n`);
    await expect(hark.transcripts.subtitles('tr_missing', { format: 'srt' })).rejects.toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });
});

describe('webhooks', () => {
  it('the notice verifies with verifySignature; deliveries list and replay', async () => {
    const rx = await startReceiver();
    try {
      const up = await hark.upload(audio);
      const t = await hark.transcripts.create({ uploadId: up.id, webhookUrl: rx.url, externalId: 'hooked' });
      await hark.waitForTranscript(t.id, { timeoutMs: 90_000 });
      const [notice] = await rx.next(1);
      const header = notice!.headers['hark-signature'];
      expect(verifySignature(notice!.raw, header, acct.apiKey)).toBe(true);
      expect(verifySignature(notice!.raw.toString('utf8'), header, acct.apiKey)).toBe(true);
      expect(verifySignature(notice!.raw, header, 'tk_someone_else')).toBe(false);
      expect(JSON.parse(notice!.raw.toString('utf8'))).toMatchObject({
        id: t.id,
        status: 'done',
        externalId: 'hooked',
      });

      // The dispatcher records the attempt once the receiver has answered.
      const first = await waitFor(
        async () => {
          const list = await hark.webhookDeliveries.list(t.id);
          return list.length > 0 ? list : null;
        },
        { timeout: 10_000, message: 'the delivery record' },
      );
      expect(first).toEqual([
        expect.objectContaining({
          transcriptId: t.id,
          url: rx.url,
          attempt: 1,
          delivered: true,
          statusCode: 204,
          manual: false,
        }),
      ]);
      const replay = await hark.webhookDeliveries.replay(t.id);
      expect(replay).toMatchObject({
        transcriptId: t.id,
        attempt: 2,
        delivered: true,
        statusCode: 204,
        manual: true,
        error: null,
      });
      const [, second] = await rx.next(2);
      expect(verifySignature(second!.raw, second!.headers['hark-signature'], acct.apiKey)).toBe(true);
      expect((await hark.webhookDeliveries.list(t.id)).map((d) => d.attempt)).toEqual([1, 2]);
    } finally {
      await rx.close();
    }
  });

  it('replay without a webhookUrl is 409 no_webhook', async () => {
    const t = await hark.transcripts.create({ url: 'http://127.0.0.1:9/a.wav' });
    await hark.transcripts.cancel(t.id);
    await expect(hark.webhookDeliveries.replay(t.id)).rejects.toMatchObject({
      code: 'no_webhook',
      status: 409,
    });
  });
});
