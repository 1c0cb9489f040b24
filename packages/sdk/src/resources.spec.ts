import { Hark } from './client';
import { HarkApiError, HarkTimeoutError, isHarkApiError } from './errors';
import { FakeApi, envelope, transcriptFixture } from './fake-api.fixture';
import type { Sleep } from './transport';

function client(api: FakeApi, sleep: Sleep = async () => undefined) {
  return new Hark({
    apiKey: 'tk_test',
    baseUrl: 'http://hark.test',
    fetch: api.fetch,
    sleep,
    random: () => 0.5,
  });
}

describe('transcripts.create: Idempotency-Key', () => {
  it('sends a random key, the same on every retry of one call, so a lost answer makes one transcript', async () => {
    const api = new FakeApi()
      .fault('POST', '/v1/transcripts', 'lose-answer')
      .fault('POST', '/v1/transcripts', envelope(503, 'unavailable', true));
    const t = await client(api).transcripts.create({ uploadId: 'up_1', speakers: '2-3' });
    const posts = api.of('POST', '/v1/transcripts');
    expect(posts).toHaveLength(3);
    const keys = posts.map((p) => p.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).toBe(1);
    expect(api.transcripts.size).toBe(1);
    expect(t.id).toBe([...api.transcripts.keys()][0]);
    expect(JSON.parse(Buffer.from(posts[0]!.body!).toString())).toEqual({
      uploadId: 'up_1',
      speakers: '2-3',
    });
    expect(posts[0]!.headers.get('content-type')).toBe('application/json');
  });

  it('uses a fresh key per call, or the caller’s own', async () => {
    const api = new FakeApi();
    const hark = client(api);
    await hark.transcripts.create({ url: 'https://e.com/a' });
    await hark.transcripts.create({ url: 'https://e.com/a' });
    await hark.transcripts.create({ url: 'https://e.com/a' }, { idempotencyKey: 'mine-1' });
    const keys = api.of('POST').map((p) => p.headers.get('idempotency-key'));
    expect(new Set(keys).size).toBe(3);
    expect(keys[2]).toBe('mine-1');
    expect(api.transcripts.size).toBe(3);
  });
});

describe('transcripts', () => {
  it('get passes wait; list passes filters, dates as ISO strings', async () => {
    const api = new FakeApi();
    const hark = client(api);
    const { id } = await hark.transcripts.create({ url: 'https://e.com/a' });
    await hark.transcripts.get(id, { wait: 30 });
    expect(api.of('GET')[0]!.query.get('wait')).toBe('30');
    api.fault(
      'GET',
      '/v1/transcripts',
      () =>
        new Response(
          JSON.stringify({ data: { transcripts: [], nextCursor: null, total: 0, page: 2, perPage: 5 } }),
        ),
    );
    await hark.transcripts.list({
      page: 2,
      perPage: 5,
      status: 'done',
      since: new Date('2026-01-02T03:04:05Z'),
      externalId: 'x y',
    });
    const q = api.of('GET', '/v1/transcripts').at(-1)!.query;
    expect(Object.fromEntries(q)).toEqual({
      page: '2',
      perPage: '5',
      status: 'done',
      since: '2026-01-02T03:04:05.000Z',
      externalId: 'x y',
    });
  });

  it('listAll walks every page through nextCursor', async () => {
    const api = new FakeApi();
    const pages: Record<string, { ids: string[]; next: string | null }> = {
      '': { ids: ['tr_5', 'tr_4'], next: 'c1' },
      c1: { ids: ['tr_3', 'tr_2'], next: 'c2' },
      c2: { ids: ['tr_1'], next: null },
    };
    api.fault(
      'GET',
      /^\/v1\/transcripts$/,
      // Read the cursor from the request the fake just recorded.
      () => {
        const page = pages[api.requests.at(-1)!.query.get('cursor') ?? '']!;
        return new Response(
          JSON.stringify({
            data: {
              transcripts: page.ids.map((id) => transcriptFixture(id)),
              nextCursor: page.next,
              total: null,
              page: null,
              perPage: 2,
            },
          }),
        );
      },
      3,
    );
    const seen: string[] = [];
    for await (const t of client(api).transcripts.listAll({ perPage: 2, status: 'processing' }))
      seen.push(t.id);
    expect(seen).toEqual(['tr_5', 'tr_4', 'tr_3', 'tr_2', 'tr_1']);
    expect(api.requests.map((r) => r.query.get('cursor'))).toEqual([null, 'c1', 'c2']);
    expect(
      api.requests.every((r) => r.query.get('perPage') === '2' && r.query.get('status') === 'processing'),
    ).toBe(true);
  });

  it('cancel: a retry that meets its own earlier success returns the canceled transcript', async () => {
    const api = new FakeApi();
    const hark = client(api);
    const { id } = await hark.transcripts.create({ url: 'https://e.com/a' });
    api.fault('POST', /\/cancel$/, 'lose-answer');
    await expect(hark.transcripts.cancel(id)).resolves.toMatchObject({ id, status: 'canceled' });
    // Without an earlier lost answer, transcript_finished is reported as it is.
    await expect(hark.transcripts.cancel(id)).rejects.toMatchObject({
      code: 'transcript_finished',
      status: 409,
    });
  });

  it('delete: a 404 after a lost answer is this call’s own success; a plain 404 is not', async () => {
    const api = new FakeApi();
    const hark = client(api);
    const { id } = await hark.transcripts.create({ url: 'https://e.com/a' });
    await expect(hark.transcripts.delete(id)).rejects.toMatchObject({ code: 'transcript_processing' });
    api.transcripts.get(id)!.status = 'done';
    api.fault('DELETE', '/v1/transcripts/', 'lose-answer');
    await expect(hark.transcripts.delete(id)).resolves.toEqual({ id, deleted: true });
    const err = await hark.transcripts.delete(id).catch((e: unknown) => e);
    expect(isHarkApiError(err, 'not_found')).toBe(true);
  });

  it('delete: a 404 after a failure that provably sent nothing (refused, no DNS) is a plain 404', async () => {
    // undici's fetch fails with TypeError('fetch failed') and the system error as its cause.
    const fetchFailed = (code: string) => () => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error(`connect ${code}`), { code }) });
    };
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']) {
      const api = new FakeApi().fault('DELETE', '/v1/transcripts/', fetchFailed(code));
      const err = await client(api)
        .transcripts.delete('tr_never_existed')
        .catch((e: unknown) => e);
      expect(isHarkApiError(err, 'not_found')).toBe(true);
      expect(api.requests).toHaveLength(2);
    }
    // fetch refusing a header it cannot carry throws before connecting, with no cause.
    const badHeader = () => {
      throw new TypeError('Headers.append: "x\n" is an invalid header value.');
    };
    const api = new FakeApi().fault('DELETE', '/v1/transcripts/', badHeader);
    const err = await client(api)
      .transcripts.delete('tr_never_existed')
      .catch((e: unknown) => e);
    expect(isHarkApiError(err, 'not_found')).toBe(true);
    // A reset may come after the service acted: the 404 is this call's own success.
    const reset = new FakeApi().fault('DELETE', '/v1/transcripts/', fetchFailed('ECONNRESET'));
    await expect(client(reset).transcripts.delete('tr_gone')).resolves.toEqual({
      id: 'tr_gone',
      deleted: true,
    });
  });

  it('subtitles: exactly format, maxLineLength, maxCueDuration, maxLines, speakerLabels; the text body as is', async () => {
    const srt = '1\n00:00:00,000 --> 00:00:02,500\n[A] And so my fellow Americans\n';
    const api = new FakeApi().fault(
      'GET',
      /\/subtitles$/,
      () => new Response(srt, { headers: { 'Content-Type': 'application/x-subrip' } }),
    );
    const out = await client(api).transcripts.subtitles('tr_1', {
      format: 'srt',
      maxLineLength: 32,
      maxCueDuration: 4.5,
      maxLines: 1,
      speakerLabels: true,
    });
    expect(out).toBe(srt);
    const [req] = api.requests;
    expect(req!.path).toBe('/v1/transcripts/tr_1/subtitles');
    expect(Object.fromEntries(req!.query)).toEqual({
      format: 'srt',
      maxLineLength: '32',
      maxCueDuration: '4.5',
      maxLines: '1',
      speakerLabels: 'true',
    });
    api.fault('GET', /\/subtitles$/, () => new Response('WEBVTT\n'));
    await client(api).transcripts.subtitles('tr_1', { format: 'vtt' });
    expect(Object.fromEntries(api.requests[1]!.query)).toEqual({ format: 'vtt' });
  });

  it('subtitles: 409 transcript_processing (retryable) waits Retry-After; transcript_not_done is thrown at once', async () => {
    const sleeps: number[] = [];
    const api = new FakeApi()
      .fault('GET', /\/subtitles$/, envelope(409, 'transcript_processing', true, { 'Retry-After': '4' }))
      .fault('GET', /\/subtitles$/, () => new Response('hello\n'));
    await expect(
      client(api, async (ms) => void sleeps.push(ms)).transcripts.subtitles('tr_1', { format: 'txt' }),
    ).resolves.toBe('hello\n');
    expect(sleeps).toEqual([4000]);
    const api2 = new FakeApi().fault('GET', /\/subtitles$/, envelope(409, 'transcript_not_done', false));
    await expect(client(api2).transcripts.subtitles('tr_1', { format: 'txt' })).rejects.toMatchObject({
      code: 'transcript_not_done',
      status: 409,
    });
    expect(api2.requests).toHaveLength(1);
  });

  it('ids are escaped into the path', async () => {
    const api = new FakeApi();
    await client(api)
      .transcripts.get('a/b?c')
      .catch(() => undefined);
    expect(api.requests[0]!.path).toBe('/v1/transcripts/a%2Fb%3Fc');
  });
});

describe('waitForTranscript', () => {
  it('holds each request with wait (at most 60) until the transcript finishes', async () => {
    const api = new FakeApi();
    const sleeps: number[] = [];
    const hark = client(api, async (ms) => void sleeps.push(ms));
    const { id } = await hark.transcripts.create({ url: 'https://e.com/a' });
    api.doneAfterGets = 3;
    const t = await hark.waitForTranscript(id, { timeoutMs: 10 * 60_000 });
    expect(t).toMatchObject({ id, status: 'done', durationSeconds: 11 });
    expect(api.of('GET').map((r) => r.query.get('wait'))).toEqual(['60', '60', '60']);
    // The fake answers at once; the client spaces such answers a second apart, never a busy loop.
    expect(sleeps).toEqual([1000, 1000]);
  });

  it('asks for no more wait than the time left', async () => {
    const api = new FakeApi();
    const hark = client(api);
    const { id } = await hark.transcripts.create({ url: 'https://e.com/a' });
    api.doneAfterGets = 1;
    await hark.waitForTranscript(id, { timeoutMs: 12_300 });
    expect(api.of('GET')[0]!.query.get('wait')).toBe('13');
  });

  it('returns failed and canceled transcripts too', async () => {
    const api = new FakeApi();
    const hark = client(api);
    const { id } = await hark.transcripts.create({ url: 'https://e.com/a' });
    api.transcripts.get(id)!.status = 'canceled';
    await expect(hark.waitForTranscript(id)).resolves.toMatchObject({ status: 'canceled' });
  });

  it('throws HarkTimeoutError with the last state after timeoutMs', async () => {
    const api = new FakeApi();
    // Real (short) sleeps so the deadline passes.
    const hark = client(api, (ms) => new Promise((r) => setTimeout(r, ms / 10)));
    const { id } = await hark.transcripts.create({ url: 'https://e.com/a' });
    const err = (await hark
      .waitForTranscript(id, { timeoutMs: 250 })
      .catch((e: unknown) => e)) as HarkTimeoutError;
    expect(err).toBeInstanceOf(HarkTimeoutError);
    expect(err.transcript).toMatchObject({ id, status: 'processing' });
    expect(api.of('GET').every((r) => r.query.get('wait') === '1')).toBe(true);
  });

  it('a 404 is thrown at once', async () => {
    const api = new FakeApi();
    await expect(client(api).waitForTranscript('tr_missing')).rejects.toBeInstanceOf(HarkApiError);
  });
});
