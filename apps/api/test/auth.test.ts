import request from 'supertest';
import { revokeApiKey } from '@hark/billing';
import { createTestAccount, waitFor } from '@hark/testing';
import { apiTest, envelope, startTestApi } from './helpers';

const api = apiTest();

describe('bearer authentication', () => {
  it('every bad key gets the identical 401', async () => {
    const acct = await api.newAccount();
    const revoked = await api.newAccount();
    await revokeApiKey(api.db, revoked.apiKeyId);
    const cases: Record<string, string | undefined> = {
      missing: undefined,
      emptyBearer: 'Bearer ',
      wrongScheme: `Basic ${acct.apiKey}`,
      noSpace: `Bearer${acct.apiKey}`,
      tab: `Bearer\t${acct.apiKey}`,
      unknownKey: `Bearer tk_${'A'.repeat(43)}`,
      shortKey: 'Bearer tk_x',
      longKey: `Bearer tk_${'z'.repeat(400)}`,
      noPrefix: `Bearer ${acct.apiKey.slice(3)}`,
      truncated: `Bearer ${acct.apiKey.slice(0, -1)}`,
      revoked: `Bearer ${revoked.apiKey}`,
    };
    const bodies = new Set<string>();
    for (const [name, header] of Object.entries(cases)) {
      const req = request(api.app).get('/v1/balance');
      if (header !== undefined) req.set('Authorization', header);
      const res = await req;
      expect({ name, status: res.status }).toEqual({ name, status: 401 });
      expect(res.body).toEqual(envelope('invalid_api_key', false));
      const { requestId: _ignored, ...rest } = res.body.error;
      bodies.add(JSON.stringify(rest));
      expect(res.headers['ratelimit-limit']).toBeDefined();
    }
    expect(bodies.size).toBe(1);
    await request(api.app).get('/v1/balance').set(acct.auth).expect(200);
  });

  it.each(['bearer', 'BEARER', 'bEaReR'])(
    'the scheme is case-insensitive (RFC 9110): %s <key>',
    async (scheme) => {
      const acct = await api.newAccount();
      await request(api.app).get('/v1/balance').set('Authorization', `${scheme} ${acct.apiKey}`).expect(200);
    },
  );

  it('more than one space between the scheme and the key is accepted', async () => {
    const acct = await api.newAccount();
    await request(api.app).get('/v1/balance').set('Authorization', `Bearer   ${acct.apiKey}`).expect(200);
  });

  it('a revoked key stops working within the auth cache time (default 2 s)', async () => {
    expect(api.deps.config.authCacheMs).toBe(2000);
    const acct = await api.newAccount();
    await request(api.app).get('/v1/balance').set(acct.auth).expect(200);
    await revokeApiKey(api.db, acct.apiKeyId);
    const revokedAt = Date.now();
    await waitFor(async () => (await request(api.app).get('/v1/balance').set(acct.auth)).status === 401, {
      timeout: 4000,
      interval: 100,
      message: 'revocation to take effect',
    });
    expect(Date.now() - revokedAt).toBeLessThan(2600);
  });

  it('with the cache off, a revoked key stops working at once', async () => {
    const strict = startTestApi({ authCacheMs: 0 });
    try {
      const acct = await createTestAccount(strict.db, strict.deps.config.secret);
      await request(strict.app).get('/v1/balance').set(acct.auth).expect(200);
      await revokeApiKey(strict.db, acct.apiKeyId);
      await request(strict.app).get('/v1/balance').set(acct.auth).expect(401);
    } finally {
      await strict.close();
    }
  });

  it('stored keys are HMACs: no column holds the key or its SHA-256', async () => {
    const acct = await api.newAccount();
    const row = await api.db.apiKey.findUniqueOrThrow({ where: { id: acct.apiKeyId } });
    const { createHash } = await import('node:crypto');
    const dump = JSON.stringify(row);
    expect(dump).not.toContain(acct.apiKey);
    expect(dump).not.toContain(acct.apiKey.slice(3));
    expect(dump).not.toContain(createHash('sha256').update(acct.apiKey).digest('hex'));
    expect(row.prefix).toBe(acct.apiKey.slice(0, 8));
  });
});
