import request from 'supertest';
import { apiTest } from './helpers';

const PAGE = 'https://notes.example.com';

// A page on another origin (a browser tool using the OpenAI JS client, say) calls the API only
// where the operator allowed its origin.
const allowed = apiTest({ config: { corsOrigins: [PAGE] }, account: {} });
const closed = apiTest({ account: {} });

describe('cross-origin calls (HARK_CORS_ORIGINS)', () => {
  it("answers an allowed origin's preflight before any key, echoing the headers it asks for", async () => {
    const res = await request(allowed.app)
      .options('/v1/audio/transcriptions')
      .set('Origin', PAGE)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'authorization, content-type, x-stainless-os')
      .expect(204);
    expect(res.headers['access-control-allow-origin']).toBe(PAGE);
    expect(res.headers['access-control-allow-methods']).toMatch(/POST/);
    expect(res.headers['access-control-allow-headers']).toBe('authorization, content-type, x-stainless-os');
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    expect(res.headers['vary']).toMatch(/Origin/);
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('lets an allowed page read answers and errors, and the headers a client needs', async () => {
    const ok = await request(allowed.app)
      .get('/v1/balance')
      .set(allowed.auth)
      .set('Origin', PAGE)
      .expect(200);
    expect(ok.headers['access-control-allow-origin']).toBe(PAGE);
    expect(ok.headers['access-control-expose-headers']).toMatch(/X-Request-Id/);
    expect(ok.headers['access-control-expose-headers']).toMatch(/RateLimit-Remaining/);
    expect(ok.headers['access-control-expose-headers']).toMatch(/x-should-retry/);
    const denied = await request(allowed.app).get('/v1/balance').set('Origin', PAGE).expect(401);
    expect(denied.headers['access-control-allow-origin']).toBe(PAGE);
  });

  it('says nothing to another origin, and nothing to any origin by default', async () => {
    for (const [api, origin] of [
      [allowed, 'https://evil.example'],
      [closed, PAGE],
    ] as const) {
      const pre = await request(api.app)
        .options('/v1/balance')
        .set('Origin', origin)
        .set('Access-Control-Request-Method', 'GET');
      expect(pre.status).not.toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBeUndefined();
      const get = await request(api.app).get('/v1/balance').set(api.auth).set('Origin', origin).expect(200);
      expect(get.headers['access-control-allow-origin']).toBeUndefined();
    }
  });
});
