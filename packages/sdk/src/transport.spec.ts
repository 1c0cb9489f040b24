import { inspect } from 'node:util';
import { Hark } from './client';
import { HarkApiError, HarkNetworkError } from './errors';
import { FakeApi, envelope } from './fake-api.fixture';
import { type HarkOptions } from './client';
import { parseRetryAfter } from './transport';

function client(api: FakeApi, opts: Partial<HarkOptions> = {}) {
  const sleeps: number[] = [];
  const hark = new Hark({
    apiKey: 'tk_test',
    baseUrl: 'http://hark.test/',
    fetch: api.fetch,
    sleep: async (ms) => void sleeps.push(ms),
    random: () => 0.5,
    ...opts,
  });
  return { hark, sleeps };
}

const html502 = () =>
  new Response('<html>502 Bad Gateway</html>', { status: 502, statusText: 'Bad Gateway' });

describe('requests', () => {
  it('sends the bearer key and a user agent to <baseUrl>/v1/..., and returns `data`', async () => {
    const api = new FakeApi();
    const { hark } = client(api);
    const up = await hark.uploads.create();
    expect(up).toMatchObject({ id: 'up_1', receivedBytes: 0, expectedBytes: null, sha256: null });
    const [req] = api.requests;
    expect(req!.path).toBe('/v1/uploads');
    expect(req!.headers.get('authorization')).toBe('Bearer tk_test');
    expect(req!.headers.get('user-agent')).toMatch(/^hark-sdk-node\/\d+\.\d+\.\d+$/);
  });

  it('refuses a missing key or a base URL that is not http(s)', () => {
    expect(() => new Hark({ apiKey: '', baseUrl: 'http://x' })).toThrow(TypeError);
    expect(() => new Hark({ apiKey: 'tk_x', baseUrl: 'localhost:3000' })).toThrow(/baseUrl/);
  });
});

describe('errors', () => {
  it('keeps the key out of sight: not enumerable, not inspected, never echoed by a refusal', () => {
    const key = 'tk_SECRETsecretSECRETsecretSECRETsecret';
    const hark = new Hark({ apiKey: key, baseUrl: 'http://hark.test' });
    expect(inspect(hark, { depth: 10, showHidden: true })).not.toContain('SECRET');
    expect(JSON.stringify(hark)).not.toContain('SECRET');
    // A key file's second line: fetch would echo "Bearer <key>" in its error, so it is refused here.
    for (const bad of [`${key}\n#prod`, `${key} `, `tk_\u2026${key}`]) {
      let message = '';
      try {
        new Hark({ apiKey: bad, baseUrl: 'http://hark.test' });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/apiKey/);
      expect(message).not.toContain('SECRET');
    }
  });

  it('never puts the key in a network error it builds, even when the cause quotes it', async () => {
    const key = 'tk_SECRETsecretSECRETsecretSECRETsecret';
    // A fetch (a proxy's, say) whose error repeats the Authorization header.
    const leaky: HarkOptions['fetch'] = (_url, init) =>
      Promise.reject(new TypeError(`bad header "${new Headers(init.headers).get('authorization')}"`));
    const hark = new Hark({ apiKey: key, baseUrl: 'http://h', fetch: leaky, maxRetries: 0 });
    const err = (await hark.balance().catch((e: unknown) => e)) as HarkNetworkError;
    expect(err).toBeInstanceOf(HarkNetworkError);
    expect(err.message).toContain('bad header');
    expect(inspect(err, { depth: 10 })).not.toContain('SECRET');
  });

  it("scrubs the key from a cause nested deeper, and keeps the causes' codes", async () => {
    const key = 'tk_SECRETsecretSECRETsecretSECRETsecret';
    // As undici's fetch: TypeError('fetch failed') whose cause is the system error; here the
    // inner error (a proxy agent's, say) quotes the header, and both carry a code.
    const leaky: HarkOptions['fetch'] = (_url, init) => {
      const inner = Object.assign(
        new Error(`proxy refused "${new Headers(init.headers).get('authorization')}"`),
        { code: 'ECONNREFUSED' },
      );
      return Promise.reject(
        Object.assign(new TypeError('fetch failed', { cause: inner }), { code: 'UND_ERR' }),
      );
    };
    const hark = new Hark({ apiKey: key, baseUrl: 'http://h', fetch: leaky, maxRetries: 0 });
    const err = (await hark.balance().catch((e: unknown) => e)) as HarkNetworkError;
    expect(err).toBeInstanceOf(HarkNetworkError);
    expect(inspect(err, { depth: 10 })).not.toContain('SECRET');
    const cause = err.cause as Error & { code?: string; cause?: Error & { code?: string } };
    expect(cause).toBeInstanceOf(TypeError);
    expect(cause).toMatchObject({ name: 'TypeError', message: 'fetch failed', code: 'UND_ERR' });
    expect(cause.cause).toMatchObject({ code: 'ECONNREFUSED', message: 'proxy refused "Bearer [api key]"' });
  });

  it('leaves a cause that does not quote the key as it is', async () => {
    const original = Object.assign(new TypeError('fetch failed'), { code: 'ECONNRESET' });
    const hark = new Hark({
      apiKey: 'tk_SECRETsecretSECRETsecretSECRETsecret',
      baseUrl: 'http://h',
      fetch: () => Promise.reject(original),
      maxRetries: 0,
    });
    const err = (await hark.balance().catch((e: unknown) => e)) as HarkNetworkError;
    expect(err.cause).toBe(original);
  });

  it('turns the envelope into HarkApiError with code, status, requestId and fields; no retry for a 400', async () => {
    const api = new FakeApi().fault(
      'POST',
      '/v1/transcripts',
      envelope(400, 'validation', false, {}, { url: 'url_invalid' }),
    );
    const { hark, sleeps } = client(api);
    const err = (await hark.transcripts.create({ url: 'nope' }).catch((e: unknown) => e)) as HarkApiError;
    expect(err).toBeInstanceOf(HarkApiError);
    expect(err).toMatchObject({
      code: 'validation',
      status: 400,
      retryable: false,
      requestId: 'req_fake',
      fields: { url: 'url_invalid' },
      attempts: 1,
      message: 'validation happened',
    });
    expect(api.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('an answer without the envelope is http_error, retryable when 5xx', async () => {
    const api = new FakeApi().fault('GET', '/v1/balance', html502, 10);
    const { hark } = client(api, { maxRetries: 1 });
    await expect(hark.balance()).rejects.toMatchObject({
      code: 'http_error',
      status: 502,
      retryable: true,
      attempts: 2,
    });
  });

  it("a proxy's bare 408 is retryable: a read is sent again", async () => {
    const api = new FakeApi().fault('GET', '/v1/uploads/', () => new Response('timeout', { status: 408 }));
    const { hark } = client(api);
    const up = await hark.uploads.create();
    await expect(hark.uploads.get(up.id)).resolves.toMatchObject({ id: up.id });
    expect(api.of('GET')).toHaveLength(2);
  });

  it('a 2xx that is not a {data} body is invalid_response', async () => {
    const api = new FakeApi().fault('GET', '/v1/limits', new Response('ok', { status: 200 }));
    await expect(client(api).hark.limits()).rejects.toMatchObject({ code: 'invalid_response', status: 200 });
  });
});

describe('retries', () => {
  it('retries a retryable envelope with exponential backoff and jitter, then succeeds', async () => {
    const api = new FakeApi().fault('GET', '/v1/uploads/', envelope(503, 'unavailable', true), 3);
    await client(api).hark.uploads.create();
    const { hark, sleeps } = client(api);
    await expect(hark.uploads.get('up_1')).resolves.toMatchObject({ id: 'up_1' });
    expect(api.of('GET')).toHaveLength(4);
    // Equal jitter with random() = 0.5: step/2 + 0.5 * step/2 for steps 500, 1000, 2000.
    expect(sleeps).toEqual([375, 750, 1500]);
  });

  it('draws the random half of each delay from the jitter source', async () => {
    const api = new FakeApi().fault('GET', '/v1/balance', envelope(500, 'internal', true), 2);
    const low = client(api, { random: () => 0 });
    await expect(low.hark.balance()).rejects.toBeDefined(); // the fake has no balance route: 404 at the end
    expect(low.sleeps).toEqual([250, 500]);
    const api2 = new FakeApi().fault('GET', '/v1/balance', envelope(500, 'internal', true), 2);
    const high = client(api2, { random: () => 0.999 });
    await high.hark.balance().catch(() => undefined);
    expect(high.sleeps[0]).toBeGreaterThan(495);
    expect(high.sleeps[0]).toBeLessThanOrEqual(500);
  });

  it('caps the backoff step at maxDelayMs', async () => {
    const api = new FakeApi().fault('GET', '/v1/limits', envelope(500, 'internal', true), 5);
    const { hark, sleeps } = client(api, {
      maxRetries: 5,
      baseDelayMs: 1000,
      maxDelayMs: 3000,
      random: () => 1,
    });
    await hark.limits().catch(() => undefined);
    expect(sleeps).toEqual([1000, 2000, 3000, 3000, 3000]);
  });

  it('waits exactly Retry-After on 429', async () => {
    const api = new FakeApi().fault(
      'POST',
      '/v1/transcripts',
      envelope(429, 'rate_limited', true, { 'Retry-After': '7' }),
    );
    const { hark, sleeps } = client(api);
    await expect(hark.transcripts.create({ url: 'https://example.com/a.wav' })).resolves.toMatchObject({
      status: 'processing',
    });
    expect(sleeps).toEqual([7000]);
  });

  it('does not wait a Retry-After longer than maxRetryAfterMs', async () => {
    const api = new FakeApi().fault(
      'POST',
      '/v1/transcripts',
      envelope(429, 'rate_limited', true, { 'Retry-After': '120' }),
    );
    const { hark, sleeps } = client(api, { maxRetryAfterMs: 60_000 });
    await expect(hark.transcripts.create({ url: 'https://example.com/a.wav' })).rejects.toMatchObject({
      code: 'rate_limited',
      retryAfterSeconds: 120,
    });
    expect(sleeps).toEqual([]);
  });

  it('gives up after maxRetries with the last error and the attempt count', async () => {
    const api = new FakeApi().fault('GET', '/v1/limits', 'network', 10);
    const { hark, sleeps } = client(api, { maxRetries: 2 });
    const err = (await hark.limits().catch((e: unknown) => e)) as HarkNetworkError;
    expect(err).toBeInstanceOf(HarkNetworkError);
    expect(err).toMatchObject({ retryable: true, timedOut: false, attempts: 3 });
    expect(err.message).toContain('GET /v1/limits');
    expect(sleeps).toHaveLength(2);
  });

  it('maxRetries 0 turns retries off', async () => {
    const api = new FakeApi().fault('GET', '/v1/limits', 'network');
    await expect(client(api, { maxRetries: 0 }).hark.limits()).rejects.toMatchObject({ attempts: 1 });
    expect(api.requests).toHaveLength(1);
  });

  it('does not retry a non-retryable 409', async () => {
    const api = new FakeApi().fault('POST', '/v1/transcripts', envelope(409, 'idempotency_conflict', false));
    await expect(client(api).hark.transcripts.create({ url: 'https://e.com/a' })).rejects.toMatchObject({
      code: 'idempotency_conflict',
    });
    expect(api.requests).toHaveLength(1);
  });

  it('a replay is retried only on 429: any other failure may already have sent a notice', async () => {
    const api = new FakeApi()
      .fault('POST', /webhook-deliveries$/, envelope(429, 'rate_limited', true, { 'Retry-After': '1' }))
      .fault('POST', /webhook-deliveries$/, envelope(500, 'internal', true));
    const { hark, sleeps } = client(api);
    await expect(hark.webhookDeliveries.replay('tr_1')).rejects.toMatchObject({ code: 'internal' });
    expect(api.requests).toHaveLength(2);
    expect(sleeps).toEqual([1000]);
    const api2 = new FakeApi().fault('POST', /webhook-deliveries$/, 'network');
    await expect(client(api2).hark.webhookDeliveries.replay('tr_1')).rejects.toBeInstanceOf(HarkNetworkError);
    expect(api2.requests).toHaveLength(1);
  });

  it('times a request out as a retryable network error', async () => {
    const hang: HarkOptions['fetch'] = (_url, init) =>
      new Promise((_resolve, reject) =>
        init.signal?.addEventListener('abort', () => reject(init.signal?.reason as Error)),
      );
    const hark = new Hark({
      apiKey: 'tk_x',
      baseUrl: 'http://h',
      fetch: hang,
      timeoutMs: 20,
      maxRetries: 1,
      sleep: async () => undefined,
    });
    await expect(hark.balance()).rejects.toMatchObject({
      name: 'HarkNetworkError',
      timedOut: true,
      attempts: 2,
    });
  });

  it("the caller's abort stops at once with the signal's reason, without retries", async () => {
    const api = new FakeApi().fault('GET', '/v1/limits', 'network', 10);
    const ac = new AbortController();
    const { hark } = client(api, {
      sleep: async () => {
        ac.abort(new Error('stop'));
      },
    });
    await expect(hark.limits({ signal: ac.signal })).rejects.toThrow('stop');
    expect(api.requests).toHaveLength(1);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates', () => {
    expect(parseRetryAfter('5')).toBe(5);
    expect(parseRetryAfter(null)).toBeNull();
    expect(parseRetryAfter('soon')).toBeNull();
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
  });
});
