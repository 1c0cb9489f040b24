import { once } from 'node:events';
import request from 'supertest';
import { loadApiConfig } from '../src/config';
import { apiTest, envelope } from './helpers';

const TOKEN = 'operator-token-0123456789abcdef';
const BEARER = { Authorization: `Bearer ${TOKEN}` };

const off = apiTest();
const on = apiTest({ config: { operatorToken: TOKEN } });
beforeAll(async () => {
  for (const a of [off, on]) if (a.redis.status !== 'ready') await once(a.redis, 'ready');
});

interface BoardQueue {
  name: string;
  readOnlyMode: boolean;
  counts: Record<string, number>;
  jobs: { id: string; data: unknown; opts: unknown }[];
}

describe('/admin/queues', () => {
  it('is off by default: 404 envelope', async () => {
    for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
      const res = await request(off.app).get(path).set(BEARER).expect(404);
      expect(res.body).toEqual(envelope('not_found', false));
    }
  });

  it('is never on with an empty token; a short one fails at boot', () => {
    const env = { ...process.env, HARK_OPERATOR_TOKEN: '' };
    expect(loadApiConfig(env).operatorToken).toBeUndefined();
    expect(() => loadApiConfig({ ...process.env, HARK_OPERATOR_TOKEN: 'short' })).toThrow(
      /HARK_OPERATOR_TOKEN/,
    );
    expect(loadApiConfig({ ...process.env, HARK_OPERATOR_TOKEN: TOKEN }).operatorToken).toBe(TOKEN);
  });

  it('401 envelope without the token or with a wrong one (an API key is not an operator token)', async () => {
    const acct = await on.newAccount();
    for (const auth of [
      undefined,
      'Bearer wrong-token-0123456789abcdef',
      `Bearer ${TOKEN}x`,
      TOKEN,
      acct.auth.Authorization,
    ]) {
      for (const path of ['/admin/queues', '/admin/queues/api/queues']) {
        const req = request(on.app).get(path);
        const res = await (auth ? req.set('Authorization', auth) : req).expect(401);
        expect(res.body).toEqual(envelope('invalid_api_key', false));
        expect(res.headers['www-authenticate']).toMatch(/^Basic realm=/);
      }
    }
  });

  it('200 HTML with the token (bearer, or as a Basic password for browsers)', async () => {
    const res = await request(on.app).get('/admin/queues').set(BEARER).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('Hark queues');
    expect(res.headers['x-powered-by']).toBeUndefined();
    const basic = `Basic ${Buffer.from(`operator:${TOKEN}`).toString('base64')}`;
    await request(on.app).get('/admin/queues').set('Authorization', basic).expect(200);
    // Schemes in any case, as for API keys (RFC 9110), with any spaces before the credentials.
    for (const header of [`bearer ${TOKEN}`, `BEARER  ${TOKEN}`, basic.replace('Basic ', 'basic  ')]) {
      await request(on.app).get('/admin/queues').set('Authorization', header).expect(200);
    }
    // Its assets, relative to the board's base, are served behind the token too.
    expect(res.text).toContain('<base href="/admin/queues/" />');
    const asset = /src="(static\/js\/main\.[^"]+\.js)"/.exec(res.text)?.[1];
    expect(asset).toBeDefined();
    await request(on.app).get(`/admin/queues/${asset}`).set(BEARER).expect(200);
    await request(on.app).get(`/admin/queues/${asset}`).expect(401);
  });

  it('its API lists the transcribe and webhook queues, read-only, with jobs holding ids only', async () => {
    const acct = await on.newAccount({ toppedUp: true });
    const id = await on.createTranscript(acct);
    const res = await request(on.app)
      .get('/admin/queues/api/queues?activeQueue=transcribe&status=waiting&page=1&jobsPerPage=10')
      .set(BEARER)
      .expect(200);
    const queues = (res.body as { queues: BoardQueue[] }).queues;
    expect(queues.map((q) => q.name).sort()).toEqual(['transcribe', 'webhook']);
    for (const q of queues) expect(q.readOnlyMode).toBe(true);
    const transcribe = queues.find((q) => q.name === 'transcribe')!;
    expect(transcribe.counts.waiting).toBe(1);
    expect(transcribe.jobs.map((j) => [j.id, j.data])).toEqual([[id, { transcriptId: id }]]);
    expect(JSON.stringify(res.body)).not.toContain(acct.apiKey);
  });

  it('read-only: actions are refused before the board sees them; the queue is untouched', async () => {
    const acct = await on.newAccount({ toppedUp: true });
    await request(on.app)
      .post('/v1/transcripts')
      .set(acct.auth)
      .send({ url: 'https://e.com/b.wav' })
      .expect(201);
    for (const [method, path] of [
      ['put', '/admin/queues/api/queues/transcribe/pause'],
      ['put', '/admin/queues/api/queues/transcribe/empty'],
      ['put', '/admin/queues/api/queues/transcribe/clean/waiting'],
      ['post', '/admin/queues/api/queues/transcribe/add'],
      ['delete', '/admin/queues/api/queues/transcribe/obliterate'],
    ] as const) {
      const res = await request(on.app)[method](path).set(BEARER).send({ name: 'x', data: {} }).expect(404);
      expect(res.body).toEqual(envelope('not_found', false));
    }
    const res = await request(on.app).get('/admin/queues/api/queues').set(BEARER).expect(200);
    const transcribe = (res.body as { queues: (BoardQueue & { isPaused: boolean })[] }).queues.find(
      (q) => q.name === 'transcribe',
    )!;
    expect(transcribe.isPaused).toBe(false);
    expect(transcribe.counts.waiting).toBeGreaterThanOrEqual(1);
  });
});
