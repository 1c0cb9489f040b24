import { execFile, execFileSync } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type Db, createDb } from '@hark/db';
import {
  type AppProcess,
  REPO_ROOT,
  type TestAccount,
  createTestAccount,
  startApp,
  testAudio,
  testEngine,
  waitFor,
} from '@hark/testing';
import OpenAI, { toFile } from 'openai';

// The official `openai` npm client against the built API and worker processes: real Postgres,
// Redis, ffmpeg and whisper-cli with the real multilingual base model (ggml-base.bin).
jest.setTimeout(240_000);

const JFK = testAudio.jfkWav;
/**
 * The known sentence. The multilingual base model puts the commas around "my fellow Americans"
 * or not depending on the prompt and the language hint (whisper-cli alone gives "And so my
 * fellow Americans ask not ..." with `-l auto`); every word and the rest of the punctuation are fixed.
 */
const JFK_TEXT =
  /^And so,? my fellow Americans,? ask not what your country can do for you, ask what you can do for your country\.$/;
const MAX_FILE_BYTES = 2_000_000;

let dir: string;
let db: Db;
let api: AppProcess;
let worker: AppProcess;
let baseURL: string;
let acct: TestAccount;
let openai: OpenAI;
let germanClip: string;
let env: Record<string, string>;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'hark-openai-it-'));
  // A German sentence for the translation, spoken by espeak-ng, as 16 kHz mono WAV.
  const raw = path.join(dir, 'de-raw.wav');
  germanClip = path.join(dir, 'de.wav');
  execFileSync('espeak-ng', [
    '-v',
    'de',
    '-s',
    '140',
    '-w',
    raw,
    'Guten Morgen. Das Wetter ist heute sehr schön, und wir gehen in den Park.',
  ]);
  execFileSync('ffmpeg', ['-loglevel', 'error', '-y', '-i', raw, '-ar', '16000', '-ac', '1', germanClip]);

  env = {
    PORT: '0',
    HARK_STORAGE_DIR: path.join(dir, 'storage'),
    HARK_TMP_DIR: path.join(dir, 'tmp'),
    HARK_REDIS_PREFIX: `hark-openai-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    WHISPER_BIN: testEngine.whisperBin,
    WHISPER_MODEL: testEngine.baseModel,
    HARK_RETENTION_SWEEP_MS: '0',
    HARK_RECONCILE_INTERVAL_MS: '0',
    HARK_OPENAI_MAX_FILE_BYTES: String(MAX_FILE_BYTES),
    HARK_METRICS_PORT: '0',
  };
  for (const app of ['api', 'worker']) {
    const main = path.join(REPO_ROOT, 'apps', app, 'dist/main.js');
    if (!existsSync(main)) throw new Error(`${main} is missing: build first (pnpm -s turbo run build)`);
  }
  db = createDb({ databaseUrl: process.env.DATABASE_URL!, poolSize: 2 });
  api = startApp('api', env);
  worker = startApp('worker', env);
  const port = (await api.waitForLog('api listening', 30_000)).port as number;
  await worker.waitForLog('worker ready', 30_000);
  baseURL = `http://127.0.0.1:${port}/v1`;
  acct = await createTestAccount(db, process.env.HARK_SECRET!, { toppedUp: true, credits: 1000 });
  openai = new OpenAI({ apiKey: acct.apiKey, baseURL });
});

afterAll(async () => {
  // The API process checks its responses against the OpenAPI document (HARK_VALIDATE_RESPONSES);
  // text responses it cannot replace are only logged.
  const violations = (api?.logs ?? []).filter((l) =>
    String(l.msg).startsWith('response outside the OpenAPI document'),
  );
  for (const app of [api, worker]) app?.kill('SIGTERM');
  const codes = await Promise.all([api, worker].filter(Boolean).map((a) => a.exited));
  await db?.$disconnect();
  await rm(dir, { recursive: true, force: true });
  expect(codes).toEqual(codes.map(() => 0));
  expect(violations).toEqual([]);
});

/** Awaits `call`, which must fail with an instance of `type`: its error. */
async function failsWith<T extends abstract new (...args: never[]) => Error>(
  call: Promise<unknown>,
  type: T,
): Promise<InstanceType<T>> {
  const err = await call.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(type);
  return err as InstanceType<T>;
}

async function hark(pathname: string, key = acct.apiKey): Promise<Record<string, unknown>> {
  const res = await fetch(`${baseURL}${pathname}`, { headers: { Authorization: `Bearer ${key}` } });
  return (await res.json()) as Record<string, unknown>;
}

/** Requests the API logged for a path (its one `request` line per response). */
function requestsTo(pathname: string): number {
  return api.logs.filter((l) => l.msg === 'request' && l.path === pathname).length;
}

describe('POST /v1/audio/transcriptions with the openai client', () => {
  it('transcribes jfk.wav to the known sentence; the work is an ordinary, charged transcript', async () => {
    const before = Date.now();
    const result = await openai.audio.transcriptions.create({
      file: createReadStream(JFK),
      model: 'whisper-1',
    });
    expect(result.text).toMatch(JFK_TEXT);
    expect(result.usage).toEqual({ type: 'duration', seconds: 11 });

    // Listed with the account's transcripts, done, charged by its real duration, with its usage record.
    const list = (await hark('/transcripts?perPage=5')).data as { transcripts: Record<string, unknown>[] };
    const item = list.transcripts[0]!;
    expect(item).toMatchObject({
      status: 'done',
      durationSeconds: 11,
      language: 'en',
      model: 'whisper-base',
      url: null,
    });
    expect(Date.parse(item.createdAt as string)).toBeGreaterThanOrEqual(before - 1000);
    const usage = await db.usageRecord.findUnique({ where: { transcriptId: item.id as string } });
    expect(usage?.seconds).toBe(11);
    expect(Number(usage?.cost)).toBeCloseTo(11 * (36 / 3600), 8);
    const full = (await hark(`/transcripts/${item.id as string}`)).data as Record<string, unknown>;
    expect(full.text).toBe(result.text);
    const row = await db.transcript.findUnique({
      where: { id: item.id as string },
      select: { task: true, reserved: true },
    });
    expect(row).toEqual({ task: 'transcribe', reserved: expect.anything() });
    expect(Number(row?.reserved)).toBe(0);
  });

  it('verbose_json with word and segment timestamps, the service model name, a prompt and a temperature', async () => {
    const result = await openai.audio.transcriptions.create({
      file: await toFile(createReadStream(JFK), 'jfk.wav'),
      model: 'whisper-base',
      response_format: 'verbose_json',
      timestamp_granularities: ['word', 'segment'],
      language: 'en',
      prompt: 'A speech by President Kennedy.',
      temperature: 0,
    });
    expect(result).toMatchObject({ task: 'transcribe', language: 'english' });
    expect(result.text).toMatch(JFK_TEXT);
    expect(result.duration).toBeCloseTo(11, 0);
    const words = result.words!;
    expect(words.map((w) => w.word).join(' ')).toBe(result.text);
    for (const [i, w] of words.entries()) {
      expect(w.end).toBeGreaterThanOrEqual(w.start);
      if (i > 0) expect(w.start).toBeGreaterThanOrEqual(words[i - 1]!.start);
    }
    expect(words[words.length - 1]!.end).toBeLessThanOrEqual(11.1);
    const segments = result.segments!;
    expect(segments.length).toBeGreaterThan(0);
    expect(segments.map((s) => s.text.trim()).join(' ')).toBe(result.text);
    // whisper.cpp's own segments: its timing, token ids and token log-probabilities.
    expect(segments[0]).toEqual({
      id: 0,
      seek: 0,
      start: 0,
      end: expect.any(Number),
      text: expect.stringMatching(/^ And so,? my fellow Americans/),
      tokens: expect.arrayContaining([expect.any(Number)]),
      temperature: 0,
      avg_logprob: expect.any(Number),
      compression_ratio: expect.any(Number),
      no_speech_prob: 0,
    });
    for (const seg of segments) {
      expect(seg.tokens.length).toBeGreaterThan(seg.text.split(' ').length - 1);
      expect(seg.avg_logprob).toBeLessThan(0);
      expect(seg.avg_logprob).toBeGreaterThan(-1);
      expect(seg.end).toBeGreaterThan(seg.start);
    }
    const row = await db.transcript.findFirst({
      where: { accountId: acct.accountId },
      orderBy: { createdAt: 'desc' },
      select: { prompt: true, temperature: true, requestedLanguage: true },
    });
    expect(row).toEqual({
      prompt: 'A speech by President Kennedy.',
      temperature: 0,
      requestedLanguage: 'en',
    });
  });

  it('srt comes back as text', async () => {
    const srt = await openai.audio.transcriptions.create({
      file: createReadStream(JFK),
      model: 'whisper-1',
      response_format: 'srt',
    });
    expect(srt).toMatch(/^1\n00:00:00,\d{3} --> 00:00:0\d,\d{3}\nAnd so,? my fellow Americans/);
    expect(srt).toContain('\n\n2\n');
  });

  it('vtt comes back as text', async () => {
    const vtt = await openai.audio.transcriptions.create({
      file: createReadStream(JFK),
      model: 'whisper-1',
      response_format: 'vtt',
    });
    expect(vtt).toMatch(/^WEBVTT\n\n00:00:00\.\d{3} --> 00:00:0\d\.\d{3}\nAnd so,? my fellow Americans/);
  });

  it("text, with Hark's glossary extension (a JSON string, as form fields carry it)", async () => {
    const text = await openai.audio.transcriptions.create({
      file: createReadStream(JFK),
      model: 'whisper-1',
      response_format: 'text',
      glossary: JSON.stringify({ country: 'nation' }),
    } as OpenAI.Audio.TranscriptionCreateParamsNonStreaming);
    expect(text).toMatch(
      /^And so,? my fellow Americans,? ask not what your nation can do for you, ask what you can do for your nation\.\n$/,
    );
  });
});

describe('POST /v1/audio/translations with the openai client', () => {
  it('translates German speech into English', async () => {
    const result = await openai.audio.translations.create({
      file: createReadStream(germanClip),
      model: 'whisper-1',
      response_format: 'verbose_json',
    });
    expect(result.text).toMatch(/good morning/i);
    expect(result.text).toMatch(/park/i);
    expect(result).toMatchObject({ task: 'translate', language: 'english' });
    const row = await db.transcript.findFirst({
      where: { accountId: acct.accountId },
      orderBy: { createdAt: 'desc' },
      select: { task: true, language: true, status: true },
    });
    // The transcript keeps the spoken language; its text is the English translation.
    expect(row).toEqual({ task: 'translate', language: 'de', status: 'done' });
  });
});

describe('errors the openai client raises', () => {
  it('an unknown model is a BadRequestError naming the models served, and nothing is created', async () => {
    const before = await db.transcript.count({ where: { accountId: acct.accountId } });
    const e = await failsWith(
      openai.audio.transcriptions.create({ file: createReadStream(JFK), model: 'gpt-4o-transcribe' }),
      OpenAI.BadRequestError,
    );
    expect(e.status).toBe(400);
    expect(e.message).toBe(
      "400 The model 'gpt-4o-transcribe' does not exist or is not served here; use 'whisper-1' or 'whisper-base'.",
    );
    expect([e.type, e.param, e.code]).toEqual(['invalid_request_error', 'model', 'model_not_found']);
    expect(e.requestID).toMatch(/^req_/);
    expect(await db.transcript.count({ where: { accountId: acct.accountId } })).toBe(before);
  });

  it('a missing file is a BadRequestError', async () => {
    const err = await failsWith(
      openai.audio.transcriptions.create({
        model: 'whisper-1',
      } as unknown as OpenAI.Audio.TranscriptionCreateParamsNonStreaming),
      OpenAI.BadRequestError,
    );
    expect(err.message).toBe("400 Missing required parameter: 'file'.");
    expect(err.param).toBe('file');
  });

  it('an account without credit: RateLimitError insufficient_quota, not retried, nothing held', async () => {
    const broke = await createTestAccount(db, process.env.HARK_SECRET!, { credits: 0 });
    const client = new OpenAI({ apiKey: broke.apiKey, baseURL }); // default retries
    const sent = requestsTo('/v1/audio/transcriptions');
    const e = await failsWith(
      client.audio.transcriptions.create({ file: createReadStream(JFK), model: 'whisper-1' }),
      OpenAI.RateLimitError,
    );
    expect([e.status, e.type, e.code]).toEqual([429, 'insufficient_quota', 'insufficient_quota']);
    expect(e.message).toMatch(/^429 You exceeded your current quota/);
    // The client retries 429s unless told not to (x-should-retry: false); retries would all have
    // been answered, and logged, before the error reached us.
    await waitFor(() => requestsTo('/v1/audio/transcriptions') > sent, { message: 'the request log line' });
    expect(requestsTo('/v1/audio/transcriptions') - sent).toBe(1);
    expect(await db.transcript.count({ where: { accountId: broke.accountId } })).toBe(0);
    expect(await hark('/balance', broke.apiKey)).toEqual({
      data: { currency: 'USD', total: 0, reserved: 0, available: 0 },
    });
  });

  it('a wrong key is an AuthenticationError invalid_api_key', async () => {
    const client = new OpenAI({ apiKey: `tk_${'x'.repeat(40)}`, baseURL, maxRetries: 0 });
    const err = await failsWith(
      client.audio.translations.create({ file: createReadStream(JFK), model: 'whisper-1' }),
      OpenAI.AuthenticationError,
    );
    expect(err.code).toBe('invalid_api_key');
  });

  it('a file over HARK_OPENAI_MAX_FILE_BYTES is a 413 in OpenAI shape', async () => {
    const big = await toFile(Buffer.alloc(MAX_FILE_BYTES + 1), 'big.wav');
    const e = await failsWith(
      openai.audio.transcriptions.create({ file: big, model: 'whisper-1' }),
      OpenAI.APIError,
    );
    expect([e.status, e.type, e.param, e.code]).toEqual([
      413,
      'invalid_request_error',
      'file',
      'file_too_large',
    ]);
  });

  it('past HARK_OPENAI_WAIT_SECONDS: a 504 naming the transcript, not retried; the transcript goes on', async () => {
    // An API whose queue no worker reads, waiting at most 1 s.
    const slow = startApp('api', {
      ...env,
      HARK_REDIS_PREFIX: `${env.HARK_REDIS_PREFIX}-idle`,
      HARK_OPENAI_WAIT_SECONDS: '1',
    });
    try {
      const slowBase = `http://127.0.0.1:${(await slow.waitForLog('api listening', 30_000)).port as number}/v1`;
      const client = new OpenAI({ apiKey: acct.apiKey, baseURL: slowBase });
      const e = await failsWith(
        client.audio.transcriptions.create({ file: createReadStream(JFK), model: 'whisper-1' }),
        OpenAI.InternalServerError,
      );
      expect([e.status, e.type, e.code]).toEqual([504, 'timeout_error', 'transcription_timeout']);
      const id = /transcript (tr_[A-Za-z0-9_-]+)/.exec(e.message)?.[1] ?? '';
      expect(e.message).toContain(`fetch it with GET /v1/transcripts/${id}`);
      expect(e.headers?.get('location')).toBe(`/v1/transcripts/${id}`);
      await waitFor(() =>
        slow.logs.some((l) => l.msg === 'request' && l.path === '/v1/audio/transcriptions'),
      );
      expect(
        slow.logs.filter((l) => l.msg === 'request' && l.path === '/v1/audio/transcriptions'),
      ).toHaveLength(1);
      // An ordinary transcript, still processing: it can be read and canceled (nothing charged).
      const res = await fetch(`${slowBase}/transcripts/${id}/cancel`, { method: 'POST', headers: acct.auth });
      expect([res.status, ((await res.json()) as { data: { status: string } }).data.status]).toEqual([
        200,
        'canceled',
      ]);
      expect(
        slow.logs.filter((l) => String(l.msg).startsWith('response outside the OpenAPI document')),
      ).toEqual([]);
    } finally {
      slow.kill('SIGTERM');
      expect(await slow.exited).toBe(0);
    }
  });

  it('other routes keep the Hark envelope', async () => {
    expect(await hark('/transcripts/tr_missing')).toEqual({
      error: {
        code: 'not_found',
        message: 'No such transcript.',
        retryable: false,
        requestId: expect.stringMatching(/^req_/),
      },
    });
  });
});

/** `HARK_OPENAI_PYTHON=0` skips these (no Python venv support, no package index). */
const describePython = process.env.HARK_OPENAI_PYTHON === '0' ? describe.skip : describe;

describePython('the openai Python package', () => {
  interface Raised {
    class: string | null;
    status?: number;
    message?: string;
    type?: string;
    param?: string | null;
    code?: string | null;
    shouldRetry?: string | null;
  }
  let out: {
    verbose: {
      text: string;
      language: string;
      duration: number;
      words: { word: string; start: number; end: number }[];
      segments: number | null;
    };
    badModel: Raised;
    emptyFile: Raised;
    noCredit: Raised;
  };

  beforeAll(async () => {
    const run = promisify(execFile);
    // A pinned `openai` in .hark/venv-openai (made once, like the fuzzer's venv).
    const python = (
      await run('bash', [path.join(REPO_ROOT, 'scripts/ensure-openai-python.sh')], { timeout: 300_000 })
    ).stdout.trim();
    const broke = await createTestAccount(db, process.env.HARK_SECRET!, { credits: 0 });
    const { stdout } = await run(python, [path.join(__dirname, 'fixtures/openai_python_client.py')], {
      timeout: 150_000,
      env: {
        ...process.env,
        HARK_BASE_URL: baseURL,
        HARK_API_KEY: acct.apiKey,
        HARK_BROKE_KEY: broke.apiKey,
        HARK_JFK: JFK,
      },
    });
    out = JSON.parse(stdout) as typeof out;
  }, 480_000);

  it('verbose_json with word timestamps', () => {
    expect(out.verbose.text).toMatch(JFK_TEXT);
    expect(out.verbose.language).toBe('english');
    expect(out.verbose.duration).toBeCloseTo(11, 0);
    expect(out.verbose.words.map((w) => w.word).join(' ')).toBe(out.verbose.text);
    expect(out.verbose.segments).toBeNull(); // only `word` was asked for
  });

  it('an unknown model is a BadRequestError with the message', () => {
    expect(out.badModel).toMatchObject({
      class: 'BadRequestError',
      status: 400,
      type: 'invalid_request_error',
      param: 'model',
      code: 'model_not_found',
    });
    expect(out.badModel.message).toContain(
      "The model 'whisper-large-v9' does not exist or is not served here",
    );
  });

  it('an empty file is a BadRequestError on `file`', () => {
    expect(out.emptyFile).toMatchObject({
      class: 'BadRequestError',
      status: 400,
      param: 'file',
      code: 'empty_file',
    });
  });

  it('an account without credit is a RateLimitError insufficient_quota that the client does not retry', () => {
    expect(out.noCredit).toMatchObject({
      class: 'RateLimitError',
      status: 429,
      type: 'insufficient_quota',
      code: 'insufficient_quota',
      shouldRetry: 'false',
    });
  });
});
