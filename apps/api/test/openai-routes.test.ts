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

const api = apiTest({
  config: {
    // One create a minute, shared by both ways of creating a transcript.
    rateLimits: DEFAULT_RATE_LIMITS.map((r) =>
      r.endpoint === 'POST /v1/transcripts' ? { ...r, max: 3 } : r,
    ),
    openaiWaitSeconds: 1,
    modelName: 'whisper-base',
  },
  account: { toppedUp: true, credits: 1000 },
});

const audio = (
  a: TestAccount | null,
  fields: Record<string, string> = { model: 'whisper-1' },
  path = 'transcriptions',
) => {
  let r = request(api.app).post(`/v1/audio/${path}`);
  if (a) r = r.set(a.auth);
  for (const [k, v] of Object.entries(fields)) r = r.field(k, v);
  return r.attach('file', WAV, 'a.wav');
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
