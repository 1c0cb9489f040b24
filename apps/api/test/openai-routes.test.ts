import {
  type TestAccount,
  checkAccountInvariants,
  createProcessingTranscript,
  createTestAccount,
  waitFor,
} from '@hark/testing';
import request from 'supertest';
import { DEFAULT_RATE_LIMITS } from '../src/config';
import { apiTest, envelope, startTestApi } from './helpers';

// POST /v1/audio/* in process (no worker): the refusals, in OpenAI's shape, with the same rate
// limit and concurrency limit as POST /v1/transcripts. Every response is checked against the
// OpenAPI document (HARK_VALIDATE_RESPONSES). The transcriptions themselves: openai-compat.test.ts.

const WAV = Buffer.alloc(4000); // never decoded here: no worker runs
/** HARK_OPENAI_MAX_FILE_BYTES here: small, so both sides of it are cheap to send. */
const MAX_FILE_BYTES = 5000;

const api = apiTest({
  config: {
    // One create a minute, shared by both ways of creating a transcript.
    rateLimits: DEFAULT_RATE_LIMITS.map((r) =>
      r.endpoint === 'POST /v1/transcripts' ? { ...r, max: 3 } : r,
    ),
    openaiWaitSeconds: 1,
    modelName: 'whisper-base',
    openaiMaxFileBytes: MAX_FILE_BYTES,
  },
  account: { toppedUp: true, credits: 1000 },
});

const audio = (
  a: TestAccount | null,
  fields: Record<string, string> = { model: 'whisper-1' },
  path = 'transcriptions',
  file = WAV,
) => {
  let r = request(api.app).post(`/v1/audio/${path}`);
  if (a) r = r.set(a.auth);
  for (const [k, v] of Object.entries(fields)) r = r.field(k, v);
  return r.attach('file', file, 'a.wav');
};

const openAiError = (param: string | null, code: string | null, type = 'invalid_request_error') => ({
  error: { message: expect.any(String), type, param, code },
});

describe('POST /v1/audio/* refusals', () => {
  it('401 without a key, in OpenAI shape, with the RateLimit headers', async () => {
    const res = await audio(null);
    expect([res.status, res.body]).toEqual([401, openAiError(null, 'invalid_api_key')]);
    expect(res.headers['ratelimit-limit']).toMatch(/^\d+$/);
    expect(res.headers['x-request-id']).toMatch(/^req_/);
  });

  it('400 for a body that is not multipart, and for an invalid extension, naming the parameter', async () => {
    const json = await request(api.app)
      .post('/v1/audio/translations')
      .set(api.auth)
      .send({ model: 'whisper-1' });
    expect([json.status, json.body]).toEqual([400, openAiError(null, 'invalid_content_type')]);
    const speakers = await audio(api.account, { model: 'whisper-1', speakers: '30' });
    expect([speakers.status, speakers.body]).toEqual([400, openAiError('speakers', 'speakers_invalid')]);
    const glossary = await audio(api.account, { model: 'whisper-1', glossary: '{"a":' });
    expect([glossary.status, glossary.body]).toEqual([400, openAiError('glossary', 'glossary_invalid')]);
    expect(await api.db.upload.count({ where: { accountId: api.account.accountId } })).toBe(0);
  });

  it('HARK_OPENAI_MAX_FILE_BYTES: a file of exactly that size is read, one byte more is a 413', async () => {
    const a = await api.newAccount({ toppedUp: true, credits: 1000 });
    // An unknown model: past the body parser, refused before anything is stored.
    const at = await audio(a, { model: 'whisper-large' }, 'transcriptions', Buffer.alloc(MAX_FILE_BYTES));
    expect([at.status, at.body]).toEqual([400, openAiError('model', 'model_not_found')]);
    const over = await audio(a, { model: 'whisper-1' }, 'transcriptions', Buffer.alloc(MAX_FILE_BYTES + 1));
    expect([over.status, over.body]).toEqual([413, openAiError('file', 'file_too_large')]);
    expect(over.body.error.message).toContain(`${MAX_FILE_BYTES} bytes`);
  });

  it("other methods and paths under /v1/audio keep Hark's envelope", async () => {
    const get = await request(api.app).get('/v1/audio/transcriptions').set(api.auth);
    expect([get.status, get.body]).toEqual([404, envelope('not_found', false)]);
    const other = await request(api.app).post('/v1/audio/speech').set(api.auth);
    expect([other.status, other.body]).toEqual([404, envelope('not_found', false)]);
  });

  it('429 concurrency_limit_exceeded for an account without a top-up already running 2', async () => {
    const trial = await api.newAccount({ credits: 100 });
    await createProcessingTranscript(api.db, trial);
    await createProcessingTranscript(api.db, trial);
    const res = await audio(trial);
    expect([res.status, res.body]).toEqual([
      429,
      openAiError(null, 'concurrency_limit_exceeded', 'requests'),
    ]);
    expect(await api.db.transcript.count({ where: { accountId: trial.accountId } })).toBe(2);
    expect(await checkAccountInvariants(api.db, trial.accountId)).toEqual([]);
  });
});

// Express matches routes in any case and with a trailing slash: these reach the same handlers,
// and their errors (every status, not only 400) keep OpenAI's shape too. On an API of their own
// without the response validator, which finds operations by their exact documented path only.
describe('path variants Express routes to the same operations', () => {
  let own: ReturnType<typeof startTestApi>;
  let a: TestAccount;
  beforeAll(async () => {
    own = startTestApi({ validateResponses: false, openaiMaxFileBytes: MAX_FILE_BYTES });
    a = await createTestAccount(own.db, own.deps.config.secret, { toppedUp: true, credits: 1000 });
  });
  afterAll(() => own.close());

  it.each(['transcriptions/', 'Translations', 'TRANSCRIPTIONS/'])(
    '/v1/audio/%s: a 400 and a 413 in OpenAI shape',
    async (path) => {
      const post = (model: string, file: Buffer) =>
        request(own.app)
          .post(`/v1/audio/${path}`)
          .set(a.auth)
          .field('model', model)
          .attach('file', file, 'a.wav');
      const bad = await post('whisper-large', WAV);
      expect([bad.status, bad.body]).toEqual([400, openAiError('model', 'model_not_found')]);
      const big = await post('whisper-1', Buffer.alloc(MAX_FILE_BYTES + 1));
      expect([big.status, big.body]).toEqual([413, openAiError('file', 'file_too_large')]);
      expect(big.headers['x-should-retry']).toBe('false');
    },
  );

  it("other paths keep Hark's envelope", async () => {
    const res = await request(own.app).post('/v1/audio/transcriptions//').set(a.auth);
    expect([res.status, res.body]).toEqual([404, envelope('not_found', false)]);
  });
});

describe('the prompt', () => {
  it("a long one (the previous chunk's transcript) is accepted; the transcript keeps its last words", async () => {
    const a = await api.newAccount({ toppedUp: true, credits: 1000 });
    const previous = Array.from({ length: 3000 }, (_, i) => `w${i}`).join(' ');
    // Created, then the 1 s wait passes with no worker: 504 naming the transcript.
    const res = await audio(a, { model: 'whisper-1', prompt: previous, stream: 'False' });
    expect([res.status, res.body]).toEqual([
      504,
      openAiError(null, 'transcription_timeout', 'timeout_error'),
    ]);
    const row = await api.db.transcript.findFirst({
      where: { accountId: a.accountId },
      select: { prompt: true },
    });
    expect(row?.prompt?.length).toBeLessThanOrEqual(2000);
    expect(row?.prompt).toMatch(/^w\d+ .* w2999$/);
    expect(previous.endsWith(` ${row?.prompt}`)).toBe(true);
  });
});

describe('one rate limit with POST /v1/transcripts', () => {
  it('counts both routes; the refusal is a 429 rate_limit_exceeded with Retry-After', async () => {
    const a = await api.newAccount({ toppedUp: true, credits: 1000 });
    // 1: an ordinary create; 2: refused by its model (counted: the limiter runs first);
    // 3: created, then the 1 s wait passes with no worker: 504 naming the transcript.
    await request(api.app)
      .post('/v1/transcripts')
      .set(a.auth)
      .send({ url: 'https://example.com/a.wav' })
      .expect(201);
    const bad = await audio(a, { model: 'whisper-large' });
    expect([bad.status, bad.body]).toEqual([400, openAiError('model', 'model_not_found')]);
    expect(bad.headers['ratelimit-remaining']).toBe('1');
    const slow = await audio(a, { model: 'whisper-base', response_format: 'verbose_json' }, 'translations');
    expect([slow.status, slow.body]).toEqual([
      504,
      openAiError(null, 'transcription_timeout', 'timeout_error'),
    ]);
    const id = /transcript (tr_[A-Za-z0-9_-]+)/.exec(slow.body.error.message as string)?.[1];
    expect(slow.headers.location).toBe(`/v1/transcripts/${id}`);
    expect(slow.headers['x-should-retry']).toBe('false');
    const row = await api.db.transcript.findUnique({
      where: { id: id! },
      select: { status: true, task: true, uploadId: true },
    });
    expect(row).toEqual({ status: 'processing', task: 'translate', uploadId: expect.stringMatching(/^up_/) });

    const limited = await audio(a);
    expect([limited.status, limited.body]).toEqual([
      429,
      openAiError(null, 'rate_limit_exceeded', 'requests'),
    ]);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    const plain = await request(api.app)
      .post('/v1/transcripts')
      .set(a.auth)
      .send({ url: 'https://example.com/a.wav' });
    expect([plain.status, plain.body]).toEqual([429, envelope('rate_limited', true)]);
  });
});

describe('shutdown', () => {
  it('a waiting request answers 504 naming its transcript as soon as the API begins draining', async () => {
    const own = startTestApi({ openaiWaitSeconds: 60 });
    try {
      const a = await createTestAccount(own.db, own.deps.config.secret, { toppedUp: true, credits: 1000 });
      const pending = request(own.app)
        .post('/v1/audio/transcriptions')
        .set(a.auth)
        .field('model', 'whisper-1')
        .attach('file', WAV, 'a.wav');
      const answered = pending.then((r) => r);
      await waitFor(() => own.db.transcript.count({ where: { accountId: a.accountId } }));
      const started = Date.now();
      own.app.beginDrain();
      const res = await answered;
      expect(Date.now() - started).toBeLessThan(5000);
      expect([res.status, res.body]).toEqual([
        504,
        openAiError(null, 'transcription_timeout', 'timeout_error'),
      ]);
      expect(res.body.error.message).toMatch(
        /^This API instance is restarting\. It continues as transcript tr_/,
      );
      expect(res.headers['x-should-retry']).toBe('false');
    } finally {
      await own.close();
    }
  });
});
