import { spawnSync } from 'node:child_process';
import path from 'node:path';

// The try page's upload-then-create (public/upload.js, browser ES module) run by Node against a
// fake API, as in try-page-upload.spec.ts. Waits are instant: setTimeout runs its callback at once.
const prelude = `
  const { Transcriber } = await import(${JSON.stringify(path.join(__dirname, '../public/upload.js'))});
  const { ApiError } = await import(${JSON.stringify(path.join(__dirname, '../public/api.js'))});
  const waits = [];
  globalThis.setTimeout = (fn, ms) => { waits.push(ms); fn(); return 0; };
  const calls = [];
  let uploads = 0;
  /** Answers of POST /transcripts in turn: an ApiError is thrown, anything else returned. */
  const creates = [];
  let made = 0;
  const client = {
    async request(method, p, opts = {}) {
      if (p.startsWith('/uploads')) {
        calls.push(method + ' /uploads');
        return method === 'POST' ? { id: 'up_' + ++uploads, receivedBytes: 0 } : { receivedBytes: 0 };
      }
      calls.push({ create: opts.json, key: opts.headers?.['Idempotency-Key'] ?? null });
      const answer = creates.length ? creates.shift() : null;
      if (answer instanceof ApiError) throw answer;
      return answer ?? { id: 'tr_' + ++made, status: 'processing' };
    },
    async putChunk(id, blob) {
      calls.push('PUT /uploads');
      return { receivedBytes: blob.size };
    },
  };
  const lost = () => new ApiError(0, { code: 'network', message: 'The API could not be reached.' });
  const file = new File([Buffer.alloc(1000, 7)], 'talk.wav', { lastModified: 1 });
  const t = new Transcriber(client);
  const start = (f, options) => t.start(f, options).then((c) => c.id, (e) => e.code);
`;

function run(body: string) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', prelude + body], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as { results: string[]; calls: unknown[]; waits: number[] };
}

const create = (uploadId: string, key: string, options = {}) => ({ create: { uploadId, ...options }, key });

describe('try page: the create after the upload', () => {
  it('a lost answer is retried with the same Idempotency-Key (try- + the upload id) and body', () => {
    const r = run(`
      creates.push(lost(), new ApiError(503, { code: 'unavailable', message: 'x', retryable: true }));
      const results = [await start(file, { language: 'en' })];
      console.log(JSON.stringify({ results, calls, waits }));
    `);
    expect(r.results).toEqual(['tr_1']);
    const c = create('up_1', 'try-up_1', { language: 'en' });
    expect(r.calls).toEqual(['POST /uploads', 'PUT /uploads', c, c, c]);
    expect(r.waits).toHaveLength(2); // backoff between the tries
  });

  it('after the create failed for good, the next click reuses the upload and the key', () => {
    const r = run(`
      for (let i = 0; i < 6; i++) creates.push(lost());
      const results = [await start(file, {}), await start(file, {})];
      console.log(JSON.stringify({ results, calls, waits }));
    `);
    expect(r.results).toEqual(['network', 'tr_1']);
    expect(r.calls.filter((c) => typeof c === 'string')).toEqual(['POST /uploads', 'PUT /uploads']);
    expect(r.calls.slice(2)).toEqual(Array(7).fill(create('up_1', 'try-up_1')));
  });

  it('the same file chosen again (a new File object) keeps its upload; another file is uploaded', () => {
    const r = run(`
      creates.push(lost());
      for (let i = 0; i < 5; i++) creates.push(lost());
      const again = new File([Buffer.alloc(1000, 7)], 'talk.wav', { lastModified: 1 });
      const other = new File([Buffer.alloc(900, 7)], 'other.wav', { lastModified: 1 });
      const results = [await start(file, {}), await start(again, {}), await start(other, {})];
      console.log(JSON.stringify({ results, calls, waits }));
    `);
    expect(r.results).toEqual(['network', 'tr_1', 'tr_2']);
    expect(r.calls.filter((c) => typeof c === 'string')).toEqual([
      'POST /uploads',
      'PUT /uploads',
      'POST /uploads',
      'PUT /uploads',
    ]);
    expect(r.calls.at(-4)).toEqual(create('up_1', 'try-up_1'));
    expect(r.calls.at(-1)).toEqual(create('up_2', 'try-up_2'));
  });

  it('options changed after a failure: a new key for the new body (the old one would be 409)', () => {
    const r = run(`
      for (let i = 0; i < 6; i++) creates.push(lost());
      const results = [await start(file, { language: 'en' }), await start(file, { language: 'de' })];
      console.log(JSON.stringify({ results, calls, waits }));
    `);
    expect(r.results).toEqual(['network', 'tr_1']);
    expect(r.calls.at(-2)).toEqual(create('up_1', 'try-up_1', { language: 'en' }));
    expect(r.calls.at(-1)).toEqual(create('up_1', 'try-up_1-1', { language: 'de' }));
  });

  it('a click after a transcript was made: same upload, a new transcript (new key)', () => {
    const r = run(`
      const results = [await start(file, {}), await start(file, {})];
      console.log(JSON.stringify({ results, calls, waits }));
    `);
    expect(r.results).toEqual(['tr_1', 'tr_2']);
    expect(r.calls).toEqual([
      'POST /uploads',
      'PUT /uploads',
      create('up_1', 'try-up_1'),
      create('up_1', 'try-up_1-1'),
    ]);
  });

  it('a kept upload the API no longer has (404 upload_not_found): uploaded again, once', () => {
    const r = run(`
      const gone = () => new ApiError(404, { code: 'upload_not_found', message: 'x' });
      creates.push(lost(), lost(), lost(), lost(), lost(), lost(), gone(), null, gone(), gone());
      const results = [await start(file, {}), await start(file, {}), await start(file, {})];
      console.log(JSON.stringify({ results, calls, waits }));
    `);
    // Second click: the kept upload is gone, a new one is made and used. Third: the kept one is
    // gone again, and so is the one just made: that is shown, not looped on.
    expect(r.results).toEqual(['network', 'tr_1', 'upload_not_found']);
    expect(r.calls.slice(8)).toEqual([
      create('up_1', 'try-up_1'),
      'POST /uploads',
      'PUT /uploads',
      create('up_2', 'try-up_2'),
      create('up_2', 'try-up_2-1'),
      'POST /uploads',
      'PUT /uploads',
      create('up_3', 'try-up_3'),
    ]);
  });

  it('a validation error is not retried and reaches the page with its fields', () => {
    const r = run(`
      creates.push(new ApiError(400, { code: 'validation', message: 'x', fields: { speakers: 'speakers_invalid' } }));
      const e = await t.start(file, { speakers: '0-99' }).catch((e) => e);
      console.log(JSON.stringify({ results: [e.code, e.fields], calls, waits }));
    `);
    expect(r.results).toEqual(['validation', { speakers: 'speakers_invalid' }]);
    expect(r.calls).toHaveLength(3);
    expect(r.waits).toEqual([]);
  });
});
