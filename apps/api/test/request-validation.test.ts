import { createTestAccount, type TestAccount } from '@hark/testing';
import request from 'supertest';
import { TranscriptService } from '../src/services/transcript.service';
import { envelope, startTestApi, type TestApi } from './helpers';

// Values the validation layer refuses on every route, whatever the field: a string holding
// U+0000 (Postgres text and jsonb cannot store it: it once answered 500 `internal`).
let api: TestApi;
let acct: TestAccount;

beforeAll(async () => {
  api = startTestApi();
  acct = await createTestAccount(api.db, api.deps.config.secret, { toppedUp: true, credits: 1000 });
});
afterAll(() => api.close());

const NUL = '\u0000';
const url = 'https://example.com/a.wav';
const invalid = (fields: Record<string, string>) => ({ status: 400, body: envelope('validation', false, fields) });
const outcome = (res: request.Response) => ({ status: res.status, body: res.body as unknown });

describe('U+0000 in a string', () => {
  const bodies: [string, Record<string, unknown>, Record<string, string>][] = [
    ['url', { url: `https://example.com/a${NUL}.wav` }, { url: 'url_invalid' }],
    ['webhookUrl', { url, webhookUrl: `https://example.com/h${NUL}` }, { webhookUrl: 'webhook_url_invalid' }],
    ['externalId', { url, externalId: `ext${NUL}` }, { externalId: 'external_id_invalid' }],
    ['language', { url, language: `en${NUL}` }, { language: 'language_invalid' }],
    ['uploadId', { uploadId: `up_x${NUL}` }, { uploadId: 'upload_id_invalid' }],
    ['speakers', { url, speakers: `1-${NUL}2` }, { speakers: 'speakers_invalid' }],
    ['a metadata value', { url, metadata: { k: `v${NUL}` } }, { metadata: 'metadata_invalid' }],
    ['a metadata key', { url, metadata: { [`k${NUL}`]: 'v' } }, { metadata: 'metadata_invalid' }],
    ['a glossary term', { url, glossary: { hark: `Hark${NUL}` } }, { glossary: 'glossary_invalid' }],
    ['a glossary key', { url, glossary: { [`ha${NUL}rk`]: 'Hark' } }, { glossary: 'glossary_invalid' }],
  ];

  it.each(bodies)('in %s is 400 validation with its key, as JSON, form and multipart', async (_l, body, fields) => {
    const a = await createTestAccount(api.db, api.deps.config.secret, { toppedUp: true, credits: 1000 });
    const json = await request(api.app).post('/v1/transcripts').set(a.auth).send(body);
    expect(outcome(json)).toEqual(invalid(fields));
    // Form bodies carry objects as JSON text.
    const asText = Object.fromEntries(
      Object.entries(body).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
    );
    const form = await request(api.app).post('/v1/transcripts').set(a.auth).type('form').send(asText);
    expect(outcome(form)).toEqual(invalid(fields));
    let multipart = request(api.app).post('/v1/transcripts').set(a.auth);
    for (const [k, v] of Object.entries(asText)) multipart = multipart.field(k, v);
    expect(outcome(await multipart)).toEqual(invalid(fields));
    expect(await api.db.transcript.count({ where: { accountId: a.accountId } })).toBe(0);
  });

  it('in form bracket syntax (metadata[k]=v) too', async () => {
    for (const form of [`url=${url}&metadata[k]=v%00`, `url=${url}&metadata[k%00]=v`]) {
      const res = await request(api.app).post('/v1/transcripts').set(acct.auth).type('form').send(form);
      expect(outcome(res)).toEqual(invalid({ metadata: 'metadata_invalid' }));
    }
  });

  it('in an Idempotency-Key is idempotency_key_invalid (Node refuses it in a header first)', async () => {
    const service = new TranscriptService(api.db, null as never, null as never, null as never, {
      ratePerHour: '36',
      speakersRatePerHour: '48',
      provisionalHoldSeconds: 60,
      modelName: 'whisper-test',
      isAllowedWebhookUrl: () => Promise.resolve(true),
    });
    await expect(service.validate({ url }, `key${NUL}`)).rejects.toMatchObject({
      code: 'validation',
      fields: { idempotencyKey: 'idempotency_key_invalid' },
    });
  });

  it.each([
    ['/v1/transcripts?externalId=a%00', { externalId: 'external_id_invalid' }],
    ['/v1/transcripts?cursor=a%00', { cursor: 'cursor_invalid' }],
    ['/v1/transcripts?since=%00', { since: 'date_invalid' }],
    ['/v1/transcripts/tr_x?wait=1%00', { wait: 'wait_invalid' }],
    ['/v1/transcripts/tr_x/subtitles?format=srt%00', { format: 'format_invalid' }],
  ])('in a query parameter (%s) is 400 validation with its key', async (path, fields) => {
    expect(outcome(await request(api.app).get(path).set(acct.auth))).toEqual(invalid(fields));
  });

  it('in an upload query parameter is 400 validation, and no upload is made', async () => {
    const a = await createTestAccount(api.db, api.deps.config.secret);
    const res = await request(api.app).post('/v1/uploads?sha256=%00').set(a.auth);
    expect(outcome(res)).toEqual(invalid({ sha256: 'sha256_invalid' }));
    expect(await api.db.upload.count({ where: { accountId: a.accountId } })).toBe(0);
  });

  it.each([
    ['get', '/v1/transcripts/%00', 'not_found'],
    ['post', '/v1/transcripts/%00/cancel', 'not_found'],
    ['delete', '/v1/transcripts/%00', 'not_found'],
    ['get', '/v1/transcripts/%00/subtitles', 'not_found'],
    ['get', '/v1/transcripts/%00/webhook-deliveries', 'not_found'],
    ['post', '/v1/transcripts/%00/webhook-deliveries', 'not_found'],
    ['get', '/v1/uploads/%00', 'upload_not_found'],
    ['put', '/v1/uploads/%00', 'upload_not_found'],
  ] as const)('in a path id (%s %s) names nothing: 404 %s', async (method, path, code) => {
    const req = request(api.app)[method](path).set(acct.auth);
    const res = await (method === 'put' ? req.type('application/octet-stream').send(Buffer.from('x')) : req);
    expect(outcome(res)).toEqual({ status: 404, body: envelope(code, false) });
  });
});
