import request from 'supertest';
import { checkAccountInvariants, type TestAccount } from '@hark/testing';
import { apiTest, envelope, startTestApi } from './helpers';

const api = apiTest({ account: { toppedUp: true, credits: 1000 } });

const create = (body: unknown, a: TestAccount = api.account) =>
  request(api.app)
    .post('/v1/transcripts')
    .set(a.auth)
    .send(body as object);

/** POST /v1/uploads`query` (with `body`) as `a`: the new upload's id. */
async function newUpload(query: string, body?: Buffer, a: TestAccount = api.account): Promise<string> {
  const req = request(api.app).post(`/v1/uploads${query}`).set(a.auth);
  return (await (body ? req.send(body) : req).expect(201)).body.data.id as string;
}

async function expectFields(body: unknown, fields: Record<string, string>) {
  const res = await create(body);
  expect({ status: res.status, body: res.body }).toEqual({
    status: 400,
    body: envelope('validation', false, fields),
  });
}

describe('POST /v1/transcripts validation', () => {
  it.each<[unknown, Record<string, string>]>([
    [{}, { url: 'url_or_upload_id' }],
    [{ url: 'https://example.com/a.mp3', uploadId: 'up_x' }, { url: 'url_or_upload_id' }],
    [{ url: 'ftp://example.com/a.mp3' }, { url: 'url_invalid' }],
    [{ url: 'not a url' }, { url: 'url_invalid' }],
    [{ url: '' }, { url: 'url_invalid' }],
    [{ url: `https://example.com/${'a'.repeat(2040)}` }, { url: 'url_invalid' }],
    [{ url: 42 }, { url: 'url_invalid' }],
    [{ uploadId: 'up_' + 'x'.repeat(34) }, { uploadId: 'upload_id_invalid' }],
    [{ uploadId: 'up/../x' }, { uploadId: 'upload_id_invalid' }],
    [{ url: 'https://e.com/a', language: 'english!' }, { language: 'language_invalid' }],
    [{ url: 'https://e.com/a', language: 'xx' }, { language: 'language_invalid' }],
    [{ url: 'https://e.com/a', language: 'en-US-x-very-long-tag' }, { language: 'language_invalid' }],
    [{ url: 'https://e.com/a', speakers: 0 }, { speakers: 'speakers_invalid' }],
    [{ url: 'https://e.com/a', speakers: 21 }, { speakers: 'speakers_invalid' }],
    [{ url: 'https://e.com/a', speakers: 2.5 }, { speakers: 'speakers_invalid' }],
    [{ url: 'https://e.com/a', speakers: '5-2' }, { speakers: 'speakers_invalid' }],
    [{ url: 'https://e.com/a', speakers: '0-2' }, { speakers: 'speakers_invalid' }],
    [{ url: 'https://e.com/a', speakers: '2-21' }, { speakers: 'speakers_invalid' }],
    [{ url: 'https://e.com/a', speakers: '3' }, { speakers: 'speakers_invalid' }],
    [{ url: 'https://e.com/a', speakers: '2-' }, { speakers: 'speakers_invalid' }],
    [{ url: 'https://e.com/a', speakers: 'true' }, { speakers: 'speakers_invalid' }],
    [{ url: 'https://e.com/a', speakers: [2] }, { speakers: 'speakers_invalid' }],
    [{ url: 'https://e.com/a', webhookUrl: 'mailto:x@y.z' }, { webhookUrl: 'webhook_url_invalid' }],
    // Spellings the URL parser would repair: stored and echoed as sent, so refused.
    [{ url: ' https://e.com/a' }, { url: 'url_invalid' }],
    [{ url: 'https://e.com/a', webhookUrl: 'http:e.com/h' }, { webhookUrl: 'webhook_url_invalid' }],
    [{ url: 'https://e.com/a', webhookUrl: 'https://e.com/h\n' }, { webhookUrl: 'webhook_url_invalid' }],
    [{ url: 'https://e.com/a', glossary: { '': 'x' } }, { glossary: 'glossary_invalid' }],
    [{ url: 'https://e.com/a', glossary: { x: '' } }, { glossary: 'glossary_invalid' }],
    [{ url: 'https://e.com/a', glossary: { x: 'y'.repeat(81) } }, { glossary: 'glossary_invalid' }],
    // White space only is an empty side; a line break would end a subtitle cue and forge the next.
    [{ url: 'https://e.com/a', glossary: { ' ': 'x' } }, { glossary: 'glossary_invalid' }],
    [{ url: 'https://e.com/a', glossary: { x: ' \u3000 ' } }, { glossary: 'glossary_invalid' }],
    [
      { url: 'https://e.com/a', glossary: { the: 'THE\n\n99\n00:00:00,000 --> 00:00:01,000\nINJECTED' } },
      { glossary: 'glossary_invalid' },
    ],
    [{ url: 'https://e.com/a', glossary: { 'a\tb': 'x' } }, { glossary: 'glossary_invalid' }],
    [{ url: 'https://e.com/a', glossary: { x: 'y\u0085' } }, { glossary: 'glossary_invalid' }],
    [
      {
        url: 'https://e.com/a',
        glossary: Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`k${i}`, 'v'])),
      },
      { glossary: 'glossary_invalid' },
    ],
    [{ url: 'https://e.com/a', glossary: { x: 1 } }, { glossary: 'glossary_invalid' }],
    [{ url: 'https://e.com/a', glossary: 'x' }, { glossary: 'glossary_invalid' }],
    [
      {
        url: 'https://e.com/a',
        metadata: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])),
      },
      { metadata: 'metadata_invalid' },
    ],
    [{ url: 'https://e.com/a', metadata: { ['k'.repeat(41)]: 'v' } }, { metadata: 'metadata_invalid' }],
    [{ url: 'https://e.com/a', metadata: { k: 'v'.repeat(501) } }, { metadata: 'metadata_invalid' }],
    [{ url: 'https://e.com/a', metadata: { k: 1 } }, { metadata: 'metadata_invalid' }],
    [{ url: 'https://e.com/a', externalId: '' }, { externalId: 'external_id_invalid' }],
    [{ url: 'https://e.com/a', externalId: 'e'.repeat(129) }, { externalId: 'external_id_invalid' }],
    [{ url: 'https://e.com/a', retentionDays: 0 }, { retentionDays: 'retention_invalid' }],
    [{ url: 'https://e.com/a', retentionDays: 366 }, { retentionDays: 'retention_invalid' }],
    [{ url: 'https://e.com/a', retentionDays: '30' }, { retentionDays: 'retention_invalid' }],
    [{ url: 'https://e.com/a', reuseIfIdentical: true }, { reuseIfIdentical: 'reuse_needs_sha256' }],
  ])('case %# reports its key', async (body, fields) => {
    await expectFields(body, fields);
  });

  it('reports several invalid fields together', async () => {
    await expectFields(
      { language: '!!', speakers: '5-2', retentionDays: 0, externalId: '', metadata: { k: 1 } },
      {
        url: 'url_or_upload_id',
        language: 'language_invalid',
        speakers: 'speakers_invalid',
        retentionDays: 'retention_invalid',
        externalId: 'external_id_invalid',
        metadata: 'metadata_invalid',
      },
    );
  });

  it('a webhook on a private address is refused at create when private URLs are not allowed', async () => {
    const strict = startTestApi({ allowPrivateUrls: false });
    try {
      for (const webhookUrl of [
        'http://127.0.0.1:9/x',
        'http://localhost/x',
        'http://10.1.2.3/x',
        'http://[::1]/x',
      ]) {
        const res = await request(strict.app)
          .post('/v1/transcripts')
          .set(api.auth)
          .send({ url: 'https://e.com/a', webhookUrl });
        expect(res.body).toEqual(envelope('validation', false, { webhookUrl: 'webhook_url_invalid' }));
      }
    } finally {
      await strict.close();
    }
  });

  it('an audio url with credentials is refused (url_invalid), in any body type, and nothing is stored', async () => {
    const a = await api.newAccount({ toppedUp: true, credits: 1000 });
    for (const url of [
      'https://user:pass@example.com/a.wav',
      'http://user@example.com/a.wav',
      'https://:pw@example.com/a.wav',
    ]) {
      const json = await create({ url }, a);
      expect({ status: json.status, body: json.body }).toEqual({
        status: 400,
        body: envelope('validation', false, { url: 'url_invalid' }),
      });
      const form = await request(api.app).post('/v1/transcripts').set(a.auth).type('form').send({ url });
      expect(form.body).toEqual(envelope('validation', false, { url: 'url_invalid' }));
      const multipart = await request(api.app).post('/v1/transcripts').set(a.auth).field('url', url);
      expect(multipart.body).toEqual(envelope('validation', false, { url: 'url_invalid' }));
    }
    // Webhook URLs with credentials were already refused; the same check answers for both.
    const hook = await create({ url: 'https://e.com/a', webhookUrl: 'https://u:p@e.com/hook' }, a);
    expect(hook.body).toEqual(envelope('validation', false, { webhookUrl: 'webhook_url_invalid' }));
    expect(await api.db.transcript.count({ where: { accountId: a.accountId } })).toBe(0);
    expect((await api.db.account.findUniqueOrThrow({ where: { id: a.accountId } })).reserved.toString()).toBe(
      '0',
    );
  });

  it('bad JSON is 400 validation; an oversize body is 413; an unknown content type is 400', async () => {
    const bad = await request(api.app)
      .post('/v1/transcripts')
      .set(api.auth)
      .set('Content-Type', 'application/json')
      .send('{"url": ');
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual(envelope('validation', false, { body: 'body_invalid' }));
    const big = await create({ url: 'https://e.com/a', metadata: { k: 'x'.repeat(2 * 1024 * 1024) } });
    expect(big.status).toBe(413);
    expect(big.body).toEqual(envelope('payload_too_large', false));
    const xml = await request(api.app)
      .post('/v1/transcripts')
      .set(api.auth)
      .set('Content-Type', 'text/xml')
      .send('<a/>');
    expect(xml.body).toEqual(envelope('validation', false, { body: 'body_invalid' }));
    const arr = await request(api.app).post('/v1/transcripts').set(api.auth).send([1]);
    expect(arr.body).toEqual(envelope('validation', false, { body: 'body_invalid' }));
  });

  it('multipart is held to the JSON budget (1 MiB) for all its fields together, not per field', async () => {
    const a = await api.newAccount({ toppedUp: true });
    // Three fields of 400 KiB: each under 1 MiB, together over it (200 such fields were read before).
    let over = request(api.app).post('/v1/transcripts').set(a.auth).field('url', 'https://e.com/a.wav');
    for (const name of ['externalId', 'a', 'b']) over = over.field(name, 'x'.repeat(400 * 1024));
    const res = await over;
    expect([res.status, res.body]).toEqual([413, envelope('payload_too_large', false)]);
    expect(res.headers.connection).toBe('close'); // the rest of the body is not read
    // Just under the budget: read, and refused for its fields.
    let under = request(api.app).post('/v1/transcripts').set(a.auth).field('url', 'https://e.com/a.wav');
    for (const name of ['externalId', 'a']) under = under.field(name, 'x'.repeat(400 * 1024));
    const read = await under;
    expect([read.status, read.body]).toEqual([
      400,
      envelope('validation', false, { externalId: 'external_id_invalid' }),
    ]);
    expect(await api.db.transcript.count({ where: { accountId: a.accountId } })).toBe(0);
    // Multipart without a boundary: unreadable, refused like any other bad body.
    const bare = await request(api.app)
      .post('/v1/transcripts')
      .set(a.auth)
      .set('Content-Type', 'multipart/form-data')
      .send('url=x');
    expect([bare.status, bare.body]).toEqual([400, envelope('validation', false, { body: 'body_invalid' })]);
  });
});

describe('POST /v1/transcripts creates', () => {
  it('201 with the processing transcript: every documented null and zero', async () => {
    const res = await create({
      url: 'https://example.com/audio.mp3',
      externalId: 'ext-1',
      metadata: { a: 'b' },
      retentionDays: 7,
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      data: {
        id: expect.stringMatching(/^tr_/),
        status: 'processing',
        text: null,
        words: null,
        utterances: null,
        diarizationSegments: null,
        error: null,
        language: null,
        durationSeconds: 0,
        speakerCount: null,
        cost: 0,
        currency: 'USD',
        model: expect.stringMatching(/^whisper-/),
        url: 'https://example.com/audio.mp3',
        retentionDays: 7,
        externalId: 'ext-1',
        metadata: { a: 'b' },
        createdAt: expect.any(String),
      },
    });
    // The provisional hold: 60 s at 36 cents/hour = 0.6 cents.
    const bal = await request(api.app).get('/v1/balance').set(api.auth).expect(200);
    expect(bal.body.data.reserved).toBeGreaterThanOrEqual(0.6);
    expect(await checkAccountInvariants(api.db, api.account.accountId)).toEqual([]);
  });

  it('glossary sides with inner spaces, punctuation and any script are accepted as given', async () => {
    const a = await api.newAccount({ toppedUp: true });
    const glossary = { 'open ai': 'OpenAI', über: 'Über', '?!': '‽', ' x ': 'y z', 東京: 'Tōkyō' };
    await create({ url: 'https://e.com/x.wav', glossary }, a).expect(201);
    const row = await api.db.transcript.findFirstOrThrow({ where: { accountId: a.accountId } });
    expect(row.glossary).toEqual(glossary);
  });

  it('JSON, urlencoded and multipart give identical results', async () => {
    const a = await api.newAccount({ toppedUp: true });
    const json = await create(
      {
        url: 'https://e.com/x.wav',
        speakers: 3,
        retentionDays: 5,
        reuseIfIdentical: false,
        glossary: { hark: 'Hark' },
        metadata: { k: 'v' },
      },
      a,
    ).expect(201);
    const form = await request(api.app)
      .post('/v1/transcripts')
      .set(a.auth)
      .type('form')
      .send(
        'url=https%3A%2F%2Fe.com%2Fx.wav&speakers=3&retentionDays=5&reuseIfIdentical=false&glossary%5Bhark%5D=Hark&metadata=%7B%22k%22%3A%22v%22%7D',
      )
      .expect(201);
    const multipart = await request(api.app)
      .post('/v1/transcripts')
      .set(a.auth)
      .field('url', 'https://e.com/x.wav')
      .field('speakers', '3')
      .field('retentionDays', '5')
      .field('reuseIfIdentical', 'false')
      .field('glossary', '{"hark":"Hark"}')
      .field('metadata[k]', 'v')
      .expect(201);
    const strip = (b: { data: Record<string, unknown> }) => ({ ...b.data, id: 'x', createdAt: 'x' });
    expect(strip(form.body)).toEqual(strip(json.body));
    expect(strip(multipart.body)).toEqual(strip(json.body));
    const rows = await api.db.transcript.findMany({
      where: { accountId: a.accountId },
      select: { speakers: true, glossary: true, rate: true },
    });
    expect(rows.map((r) => [r.speakers, r.glossary, r.rate.toString()])).toEqual(
      Array(3).fill([3, { hark: 'Hark' }, '48']),
    );
    // Form validation reports the same keys.
    const bad = await request(api.app)
      .post('/v1/transcripts')
      .set(a.auth)
      .type('form')
      .send('url=x&speakers=5-2&retentionDays=abc');
    expect(bad.body.error.fields).toEqual({
      url: 'url_invalid',
      speakers: 'speakers_invalid',
      retentionDays: 'retention_invalid',
    });
  });

  it('402 insufficient_balance when nothing is available; no row, no hold', async () => {
    const broke = await api.newAccount({ credits: 0 });
    const res = await create({ url: 'https://e.com/a.wav' }, broke);
    expect(res.status).toBe(402);
    expect(res.body).toEqual(envelope('insufficient_balance', false));
    expect(await api.db.transcript.count({ where: { accountId: broke.accountId } })).toBe(0);
  });

  it('429 concurrency_limit: a third running transcript without a top-up; a top-up lifts it', async () => {
    const trial = await api.newAccount({ credits: 100 });
    await create({ url: 'https://e.com/1.wav' }, trial).expect(201);
    await create({ url: 'https://e.com/2.wav' }, trial).expect(201);
    const third = await create({ url: 'https://e.com/3.wav' }, trial);
    expect(third.status).toBe(429);
    expect(third.body).toEqual(envelope('concurrency_limit', true));
    const { topUp } = await import('@hark/billing');
    await topUp(api.db, trial.accountId, 1);
    await create({ url: 'https://e.com/3.wav' }, trial).expect(201);
    expect(await checkAccountInvariants(api.db, trial.accountId)).toEqual([]);
  });

  it('concurrent creates on a trial account: never more than 2 running', async () => {
    const trial = await api.newAccount({ credits: 100 });
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => create({ url: `https://e.com/${i}.wav` }, trial)),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(2);
    expect(results.filter((r) => r.status === 429)).toHaveLength(6);
  });

  it('the hold is all of available when that is less than 60 s worth', async () => {
    const poor = await api.newAccount({ credits: '0.2' });
    await create({ url: 'https://e.com/a.wav' }, poor).expect(201);
    const bal = await request(api.app).get('/v1/balance').set(poor.auth).expect(200);
    expect(bal.body.data).toEqual({ currency: 'USD', total: 0.2, reserved: 0.2, available: 0 });
    const next = await create({ url: 'https://e.com/b.wav' }, poor);
    expect(next.status).toBe(402);
  });
});

describe('creating from uploads', () => {
  it('upload_not_found, upload_empty, upload_mismatch, reuse_needs_sha256', async () => {
    const other = await api.newAccount();
    const foreign = await newUpload('', Buffer.from('abc'), other);
    const r1 = await create({ uploadId: foreign });
    expect(r1.status).toBe(404);
    expect(r1.body).toEqual(envelope('upload_not_found', false));
    expect((await create({ uploadId: 'up_nope' })).status).toBe(404);

    await expectFields({ uploadId: await newUpload('') }, { uploadId: 'upload_empty' });

    const r2 = await create({ uploadId: await newUpload('?expectedBytes=10', Buffer.from('abc')) });
    expect(r2.status).toBe(400);
    expect(r2.body).toEqual(envelope('upload_mismatch', false));

    const noSha = await newUpload('', Buffer.from('abc'));
    await expectFields(
      { uploadId: noSha, reuseIfIdentical: true },
      { reuseIfIdentical: 'reuse_needs_sha256' },
    );
    const ok = await create({ uploadId: noSha });
    expect(ok.status).toBe(201);
    expect(ok.body.data.url).toBeNull();
  });

  it('reuseIfIdentical returns the newest matching transcript (200), otherwise creates', async () => {
    const { createHash } = await import('node:crypto');
    const bytes = Buffer.from('same audio bytes');
    const digest = createHash('sha256').update(bytes).digest('hex');
    const up = () => newUpload(`?sha256=${digest}`, bytes);
    const first = await create({ uploadId: await up(), language: 'en', glossary: { a: 'b', c: 'd' } }).expect(
      201,
    );
    const again = await create({
      uploadId: await up(),
      language: 'en',
      glossary: { c: 'd', a: 'b' },
      reuseIfIdentical: true,
    });
    expect(again.status).toBe(200);
    expect(again.body.data.id).toBe(first.body.data.id);
    const otherLang = await create({ uploadId: await up(), language: 'de', reuseIfIdentical: true });
    expect(otherLang.status).toBe(201);
    const otherSpeakers = await create({
      uploadId: await up(),
      language: 'en',
      glossary: { a: 'b', c: 'd' },
      speakers: 2,
      reuseIfIdentical: true,
    });
    expect(otherSpeakers.status).toBe(201);
  });

  it('reuseIfIdentical matches a speaker range too (stored as jsonb, whose key order is its own)', async () => {
    const { createHash } = await import('node:crypto');
    const bytes = Buffer.from('ranged audio bytes');
    const digest = createHash('sha256').update(bytes).digest('hex');
    const up = () => newUpload(`?sha256=${digest}`, bytes);
    const first = await create({ uploadId: await up(), speakers: '1-2' }).expect(201);
    const again = await create({ uploadId: await up(), speakers: '1-2', reuseIfIdentical: true });
    expect(again.status).toBe(200);
    expect(again.body.data.id).toBe(first.body.data.id);
    const otherRange = await create({ uploadId: await up(), speakers: '1-3', reuseIfIdentical: true });
    expect(otherRange.status).toBe(201);
  });
});
