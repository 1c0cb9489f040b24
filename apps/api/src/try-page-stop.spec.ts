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
  let uploaded = 0;
  const start = (f) =>
    t.start(f, {}, { signal: controller.signal, onUploaded: () => uploaded++ }).then((c) => c.id, (e) => e.code);
  const results = [];
  stopOnPut = 2;
  results.push(await start(file));
  controller = new AbortController();
  results.push(await start(file));
  // Another file: another upload under another key.
  controller = new AbortController();
  results.push(await start(new File([Buffer.alloc(10, 1)], 'other.wav', { lastModified: 2 })));
  // A stopped, then B, then A again: A's upload goes on (each file keeps its own key).
  const fileA = new File([Buffer.alloc(3 * MiB, 5)], 'a.wav', { lastModified: 3 });
  const fileB = new File([Buffer.alloc(20, 6)], 'b.wav', { lastModified: 4 });
  controller = new AbortController();
  stopOnPut = puts.length + 2;
  results.push(await start(fileA));
  controller = new AbortController();
  results.push(await start(fileB));
  controller = new AbortController();
  results.push(await start(fileA));
  const received = [...uploads.values()].map((u) => u.received);
  console.log(JSON.stringify({ results, posts, puts, creates, received, uploaded }));
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
      uploaded: number;
    };
    const MiB = 1024 * 1024;
    expect(out.results).toEqual(['upload_stopped', 'tr_1', 'tr_2', 'upload_stopped', 'tr_3', 'tr_4']);
    expect(out.uploaded).toBe(4); // once per finished upload, never for a stopped one
    expect(out.posts[0]).toMatch(/^try-up-[0-9a-f]{32}$/);
    expect(out.posts[1]).toBe(out.posts[0]);
    expect(out.posts[2]).not.toBe(out.posts[0]);
    // 1 MiB stored, the stopped 2 MiB chunk, then the other 2 MiB from where the API stood (a new
    // Start sizes chunks from 1 MiB again), then the other file.
    expect(out.puts).toEqual([MiB, 2 * MiB, MiB, MiB, 10, MiB, 2 * MiB, 20, MiB, MiB]);
    expect(out.received).toEqual([3 * MiB, 10, 3 * MiB, 20]);
    expect(out.creates.map((c) => c.body.uploadId)).toEqual(['up_1', 'up_2', 'up_4', 'up_3']);
    // A, B, then A under its first key again.
    expect(out.posts.slice(3)).toEqual([out.posts[3], out.posts[4], out.posts[3]]);
    expect(out.posts[4]).not.toBe(out.posts[3]);
  });

  it('putChunk (XMLHttpRequest) drops its abort listener when it ends; a Stop rejects with the reason, another abort as a network failure', () => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', xhrScript], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    if (r.status !== 0) throw new Error(r.stderr);
    expect(JSON.parse(r.stdout)).toEqual({
      listenersAfterThree: 0,
      stopped: 'upload_stopped',
      foreign: ['network', 0],
      paused: 'upload_stopped',
    });
  });
});

// api.js's putChunk against a scripted XMLHttpRequest, and pause() cut short by an abort.
const xhrScript = `
  const { HarkClient, ApiError, pause } = await import(${JSON.stringify(path.join(__dirname, '../public/api.js'))});
  const sent = [];
  globalThis.XMLHttpRequest = class {
    upload = {};
    open() {}
    setRequestHeader() {}
    getResponseHeader() { return null; }
    send() { sent.push(this); }
    answer() {
      this.status = 200;
      this.responseText = JSON.stringify({ data: { receivedBytes: 1 } });
      this.onload?.();
      this.onloadend?.();
    }
    abort() { this.onabort?.(); this.onloadend?.(); }
  };
  const controller = new AbortController();
  let listeners = 0;
  const add = controller.signal.addEventListener.bind(controller.signal);
  const remove = controller.signal.removeEventListener.bind(controller.signal);
  controller.signal.addEventListener = (...a) => { listeners++; add(...a); };
  controller.signal.removeEventListener = (...a) => { listeners--; remove(...a); };
  const client = new HarkClient(() => 'hk_x', '/v1');
  for (let i = 0; i < 3; i++) {
    const p = client.putChunk('up_1', new Blob(['x']), () => {}, controller.signal);
    sent.at(-1).answer();
    await p;
  }
  const listenersAfterThree = listeners;
  const inFlight = client.putChunk('up_1', new Blob(['x']), () => {}, controller.signal).catch((e) => e.code);
  controller.abort(new ApiError(0, { code: 'upload_stopped', message: 'Stopped.', retryable: false }));
  const stopped = await inFlight;
  const other = client.putChunk('up_1', new Blob(['x']), () => {}, new AbortController().signal).catch((e) => [e.code, e.status]);
  sent.at(-1).abort(); // not the signal: the page unloading, say
  const foreign = await other;
  const pc = new AbortController();
  const waiting = pause(60_000, pc.signal).catch((e) => e.code);
  pc.abort(new ApiError(0, { code: 'upload_stopped', message: 'Stopped.', retryable: false }));
  console.log(JSON.stringify({ listenersAfterThree, stopped, foreign, paused: await waiting }));
`;
