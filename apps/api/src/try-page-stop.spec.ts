import { spawnSync } from 'node:child_process';
import path from 'node:path';

// The try page's Stop button (public/upload.js Transcriber with an AbortSignal) run by Node
// against a fake API that keys uploads by their create's Idempotency-Key, as the service does.
const script = `
  const { Transcriber } = await import(${JSON.stringify(path.join(__dirname, '../public/upload.js'))});
  const { ApiError } = await import(${JSON.stringify(path.join(__dirname, '../public/api.js'))});
  const MiB = 1024 * 1024;
  const uploads = new Map(); // key -> { id, received }
  const posts = [];
  const puts = [];
  const creates = [];
  let stopOnPut = 0;
  let controller = new AbortController();
  const stopped = () => new ApiError(0, { code: 'upload_stopped', message: 'Stopped.' });
  const byId = (id) => [...uploads.values()].find((u) => u.id === id);
  const client = {
    async request(method, p, opts = {}) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      if (method === 'POST' && p.startsWith('/uploads')) {
        const key = opts.headers?.['Idempotency-Key'] ?? null;
        posts.push(key);
        if (!key || !uploads.has(key)) uploads.set(key ?? Symbol(), { id: 'up_' + (uploads.size + 1), received: 0 });
        const u = uploads.get(key);
        return { id: u.id, receivedBytes: u.received };
      }
      if (method === 'GET') return { receivedBytes: byId(p.split('/').pop()).received };
      creates.push({ body: opts.json, key: opts.headers?.['Idempotency-Key'] });
      return { id: 'tr_' + creates.length, status: 'processing' };
    },
    putChunk(id, blob, _onSent, signal) {
      puts.push(blob.size);
      if (puts.length === stopOnPut) {
        // The user clicks Stop while this chunk is on its way: it never lands.
        return new Promise((_, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
          controller.abort(stopped());
        });
      }
      const u = byId(id);
      u.received += blob.size;
      return Promise.resolve({ receivedBytes: u.received });
    },
  };
  const file = new File([Buffer.alloc(3 * MiB, 7)], 'talk.wav', { lastModified: 1 });
  const t = new Transcriber(client);
  const start = (f) => t.start(f, {}, { signal: controller.signal }).then((c) => c.id, (e) => e.code);
  const results = [];
  stopOnPut = 2;
  results.push(await start(file));
  controller = new AbortController();
  results.push(await start(file));
  // Another file: another upload under another key.
  controller = new AbortController();
  results.push(await start(new File([Buffer.alloc(10, 1)], 'other.wav', { lastModified: 2 })));
  const received = [...uploads.values()].map((u) => u.received);
  console.log(JSON.stringify({ results, posts, puts, creates, received }));
`;

describe('try page: Stop during an upload', () => {
  it('aborts the chunk in flight; the next Start with the same file gets the same upload back and sends only the rest', () => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    if (r.status !== 0) throw new Error(r.stderr);
    const out = JSON.parse(r.stdout) as {
      results: string[];
      posts: string[];
      puts: number[];
      creates: { body: { uploadId: string }; key: string }[];
      received: number[];
    };
    const MiB = 1024 * 1024;
    expect(out.results).toEqual(['upload_stopped', 'tr_1', 'tr_2']);
    expect(out.posts[0]).toMatch(/^try-up-[0-9a-f]{32}$/);
    expect(out.posts[1]).toBe(out.posts[0]);
    expect(out.posts[2]).not.toBe(out.posts[0]);
    // 1 MiB stored, the stopped 2 MiB chunk, then the other 2 MiB from where the API stood (a new
    // Start sizes chunks from 1 MiB again), then the other file.
    expect(out.puts).toEqual([MiB, 2 * MiB, MiB, MiB, 10]);
    expect(out.received).toEqual([3 * MiB, 10]);
    expect(out.creates.map((c) => c.body.uploadId)).toEqual(['up_1', 'up_2']);
  });
});
