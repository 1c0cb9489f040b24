import { createTestAccount, type TestAccount } from '@hark/testing';
import request from 'supertest';
import { envelope, startTestApi, type TestApi } from './helpers';

// Requests the OpenAPI fuzzing and probing turned up: each once answered 500 `internal`.
let api: TestApi;
let acct: TestAccount;

beforeAll(async () => {
  api = startTestApi();
  acct = await createTestAccount(api.db, api.deps.config.secret);
});
afterAll(() => api.close());

describe('requests the router or body parsers refuse', () => {
  it.each([
    ['/v1/transcripts/%E0%A4%A', 'not_found'],
    ['/v1/transcripts/%ZZ/cancel', 'not_found'],
    ['/v1/uploads/%ZZ', 'upload_not_found'],
  ])('an undecodable path (%s) is 404 %s with the rate-limit headers, not 500', async (path, code) => {
    const res = await request(api.app).get(path).set(acct.auth);
    expect([res.status, res.body]).toEqual([404, envelope(code, false)]);
    expect(res.headers['ratelimit-limit']).toBeDefined();
  });

  it('a corrupt gzip body is 400 validation body_invalid, not 500', async () => {
    const res = await request(api.app)
      .post('/v1/transcripts')
      .set(acct.auth)
      .set('Content-Type', 'application/json')
      .set('Content-Encoding', 'gzip')
      .send('{"url":"https://example.com/a.wav"}');
    expect([res.status, res.body]).toEqual([400, envelope('validation', false, { body: 'body_invalid' })]);
  });
});

describe('GET /v1/openapi.json', () => {
  it('serves the document without a key, with rate-limit headers', async () => {
    const res = await request(api.app).get('/v1/openapi.json').expect(200);
    expect(res.body).toMatchObject({ openapi: '3.1.0', info: { version: '1.0.0' } });
    expect(res.headers['ratelimit-limit']).toBe('1200');
    expect(res.headers['x-request-id']).toBeDefined();
  });
});
