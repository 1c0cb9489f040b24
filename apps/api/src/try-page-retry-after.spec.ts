import { spawnSync } from 'node:child_process';
import path from 'node:path';

// The try page's retries (public/api.js, public/upload.js, browser ES modules) run by Node against
// a fake API, as in try-page-upload.spec.ts. Waits are instant: setTimeout moves a fake clock.
const prelude = `
  const { Transcriber, uploadFile } = await import(${JSON.stringify(path.join(__dirname, '../public/upload.js'))});
  const { ApiError, HarkClient } = await import(${JSON.stringify(path.join(__dirname, '../public/api.js'))});
  let now = 0;
  const waits = [];
  globalThis.setTimeout = (fn, ms) => { waits.push(ms); now += ms; fn(); return 0; };
  const limited = (retryAfter) =>
    new ApiError(429, { code: 'rate_limited', message: 'Too many requests.', retryable: true }, retryAfter);
  const file = new File([Buffer.alloc(1000)], 'a.wav');
  /** The auditor's account: its PUT limit is spent until 30 s from now (/tmp/web-audit/retry-after.mjs). */
  const client = (retryAfter, until = 30_000) => ({
    async request(m, p) {
      if (p === '/transcripts') return { id: 'tr_1', status: 'processing' };
      return m === 'POST' ? { id: 'up_1', receivedBytes: 0 } : { receivedBytes: 0 };
    },
    async putChunk() {
      if (now < until) throw limited(retryAfter);
      return { receivedBytes: 1000 };
    },
  });
  const outcome = (p) => p.then((id) => ({ id }), (e) => ({ error: e.code }));
`;

function run<T>(body: string): T {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', prelude + body], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as T;
}

type Upload = { id?: string; error?: string; waits: number[]; waitedMs: number };

describe('try page: Retry-After', () => {
  it('a 429 with Retry-After: 30 on a chunk: one wait of 30 s (plus jitter), then the upload goes on', () => {
    const r = run<Upload>(`
      const out = await outcome(uploadFile(client(30), file));
      console.log(JSON.stringify({ ...out, waits, waitedMs: now }));
    `);
    expect(r.id).toBe('up_1');
    expect(r.waits).toHaveLength(1);
    expect(r.waits[0]).toBeGreaterThanOrEqual(30_000);
    expect(r.waits[0]).toBeLessThanOrEqual(30_000 * 1.25);
  });

  it("rate_limited does not spend the attempts budget (the auditor's scenario: gave up after 15.5 s)", () => {
    const r = run<Upload>(`
      const out = await outcome(uploadFile(client(null), file));
      console.log(JSON.stringify({ ...out, waits, waitedMs: now }));
    `);
    expect(r.id).toBe('up_1');
    expect(r.waits.length).toBeGreaterThanOrEqual(6); // 6 tries (5 waits) were all it had
    expect(r.waitedMs).toBeGreaterThanOrEqual(30_000);
  });

  it('a limit that never lifts: given up (rate_limited) after a bounded total wait', () => {
    const r = run<Upload>(`
      const out = await outcome(uploadFile(client(30, Infinity), file));
      console.log(JSON.stringify({ ...out, waits, waitedMs: now }));
    `);
    expect(r.error).toBe('rate_limited');
    expect(r.waitedMs).toBeGreaterThan(60_000);
    expect(r.waitedMs).toBeLessThanOrEqual(5 * 60_000);
    expect(r.waits.every((ms) => ms >= 30_000)).toBe(true);
  });

  it('a Retry-After longer than that budget is not waited out', () => {
    const r = run<Upload>(`
      const out = await outcome(uploadFile(client(3600, Infinity), file));
      console.log(JSON.stringify({ ...out, waits, waitedMs: now }));
    `);
    expect(r).toEqual({ error: 'rate_limited', waits: [], waitedMs: 0 });
  });

  it('the create waits out Retry-After too, without spending its attempts', () => {
    const r = run<Upload>(`
      let refused = 0;
      const c = client(null, 0);
      c.request = async (m, p) => {
        if (p !== '/transcripts') return m === 'POST' ? { id: 'up_1', receivedBytes: 0 } : { receivedBytes: 0 };
        if (refused++ < 3) throw limited(20);
        return { id: 'tr_1', status: 'processing' };
      };
      const out = await outcome(new Transcriber(c).start(file, {}, { maxAttempts: 2 }).then((t) => t.id));
      console.log(JSON.stringify({ ...out, waits, waitedMs: now }));
    `);
    expect(r.id).toBe('tr_1');
    expect(r.waits).toHaveLength(3);
    expect(r.waits.every((ms) => ms >= 20_000 && ms <= 25_000)).toBe(true);
  });

  it('ApiError carries Retry-After (seconds or an HTTP date) from fetch and from XMLHttpRequest', () => {
    const r = run<{ fetched: unknown[]; put: unknown }>(`
      const envelope = JSON.stringify({ error: { code: 'rate_limited', message: 'x', retryable: true } });
      const headerSets = [{ 'Retry-After': '30' }, { 'Retry-After': new Date(Date.now() + 90_000).toUTCString() }, {}];
      const fetched = [];
      for (const headers of headerSets) {
        globalThis.fetch = async () => new Response(envelope, { status: 429, headers });
        const e = await new HarkClient(() => 'tk_x').request('GET', '/balance').catch((e) => e);
        fetched.push([e.status, e.code, e.retryAfter]);
      }
      globalThis.XMLHttpRequest = class {
        upload = {};
        open() {}
        setRequestHeader() {}
        getResponseHeader(name) { return name.toLowerCase() === 'retry-after' ? '7' : null; }
        send() { this.status = 429; this.responseText = envelope; this.onload(); }
      };
      const e = await new HarkClient(() => 'tk_x').putChunk('up_1', new Blob(['a']), () => {}).catch((e) => e);
      console.log(JSON.stringify({ fetched, put: [e.code, e.retryAfter] }));
    `);
    expect(r.fetched[0]).toEqual([429, 'rate_limited', 30]);
    expect((r.fetched[1] as number[])[2]).toBeGreaterThanOrEqual(89);
    expect((r.fetched[1] as number[])[2]).toBeLessThanOrEqual(90);
    expect(r.fetched[2]).toEqual([429, 'rate_limited', null]);
    expect(r.put).toEqual(['rate_limited', 7]);
  });
});
