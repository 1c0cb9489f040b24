import request from 'supertest';
import { TranscriptService } from '../src/services/transcript.service';
import { apiTest, envelope } from './helpers';

// Values the validation layer refuses on every route, whatever the field: a string holding
// U+0000 (Postgres text and jsonb cannot store it: it once answered 500 `internal`), and query
// parameters written as arrays or objects or sent twice (once silently ignored or picked).

const api = apiTest({ account: { toppedUp: true, credits: 1000 } });

const NUL = '\u0000';
const url = 'https://example.com/a.wav';
const invalid = (fields: Record<string, string>) => ({
  status: 400,
  body: envelope('validation', false, fields),
});
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

  it.each(bodies)(
    'in %s is 400 validation with its key, as JSON, form and multipart',
    async (_l, body, fields) => {
      const a = await api.newAccount({ toppedUp: true, credits: 1000 });
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
    },
  );

  it('in form bracket syntax (metadata[k]=v) too', async () => {
    for (const form of [`url=${url}&metadata[k]=v%00`, `url=${url}&metadata[k%00]=v`]) {
      const res = await request(api.app).post('/v1/transcripts').set(api.auth).type('form').send(form);
      expect(outcome(res)).toEqual(invalid({ metadata: 'metadata_invalid' }));
    }
  });

  it('in an Idempotency-Key is idempotency_key_invalid (Node refuses it in a header first)', async () => {
    const service = new TranscriptService(api.db, null as never, null as never, null as never, {
      ratePerHour: '36',
      speakersRatePerHour: '48',
      provisionalHoldSeconds: 60,
      modelName: 'whisper-test',
      queuedPerAccount: 1,
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
    expect(outcome(await request(api.app).get(path).set(api.auth))).toEqual(invalid(fields));
  });

  it('in an upload query parameter is 400 validation, and no upload is made', async () => {
    const a = await api.newAccount();
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
    const req = request(api.app)[method](path).set(api.auth);
    const res = await (method === 'put' ? req.type('application/octet-stream').send(Buffer.from('x')) : req);
    expect(outcome(res)).toEqual({ status: 404, body: envelope(code, false) });
  });
});

describe('query parameters as arrays or objects, or sent twice', () => {
  it.each([
    ['status[]=done', { status: 'status_invalid' }],
    ['status[x]=', { status: 'status_invalid' }],
    ['externalId[contains]=a', { externalId: 'external_id_invalid' }],
    ['page[]=2', { page: 'page_invalid' }],
    ['since[gte]=2024-01-01T00:00:00Z', { since: 'date_invalid' }],
    ['status=done&status=failed', { status: 'status_invalid' }],
    ['status=done&status=done', { status: 'status_invalid' }],
    ['perPage=1&perPage=2', { perPage: 'per_page_invalid' }],
    [
      'externalId=a&externalId=b&status[]=done',
      { externalId: 'external_id_invalid', status: 'status_invalid' },
    ],
  ])('GET /v1/transcripts?%s is 400 validation with the parameter', async (query, fields) => {
    expect(outcome(await request(api.app).get(`/v1/transcripts?${query}`).set(api.auth))).toEqual(
      invalid(fields),
    );
  });

  it('unknown parameters, bracketed or not, are still ignored', async () => {
    await request(api.app).get('/v1/transcripts?_=123&filter[x]=1').set(api.auth).expect(200);
  });

  it.each(['wait[]=1', 'wait[x]=1', 'wait=1&wait=2'])(
    'GET /v1/transcripts/{id}?%s is wait_invalid',
    async (query) => {
      const res = await request(api.app).get(`/v1/transcripts/tr_unknown?${query}`).set(api.auth);
      expect(outcome(res)).toEqual(invalid({ wait: 'wait_invalid' }));
    },
  );

  it.each(['format[]=vtt', 'format=srt&format=vtt', 'maxLines[x]=1'])(
    'GET /v1/transcripts/{id}/subtitles?%s is 400 validation',
    async (query) => {
      const res = await request(api.app).get(`/v1/transcripts/tr_unknown/subtitles?${query}`).set(api.auth);
      expect(res.status).toBe(400);
      expect(Object.keys(res.body.error.fields as object)).toEqual([
        query.includes('maxLines') ? 'maxLines' : 'format',
      ]);
    },
  );

  it.each([
    ['expectedBytes[]=5', { expectedBytes: 'expected_bytes_invalid' }],
    ['sha256[x]=' + 'a'.repeat(64), { sha256: 'sha256_invalid' }],
    ['expectedBytes=5&expectedBytes=6', { expectedBytes: 'expected_bytes_invalid' }],
    [`sha256=${'a'.repeat(64)}&sha256=${'b'.repeat(64)}`, { sha256: 'sha256_invalid' }],
  ])('POST /v1/uploads?%s is 400 validation, and no upload is made', async (query, fields) => {
    const a = await api.newAccount();
    const res = await request(api.app).post(`/v1/uploads?${query}`).set(a.auth);
    expect(outcome(res)).toEqual(invalid(fields));
    expect(await api.db.upload.count({ where: { accountId: a.accountId } })).toBe(0);
  });
});
