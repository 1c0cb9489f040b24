import { spawnSync } from 'node:child_process';
import path from 'node:path';

// The try page's resumable upload (public/upload.js, browser ES module) run by Node against a
// fake API on a simulated slow link: a clock that the link advances, and the API's 300 s request
// time-out (a chunk not received in full by then is refused 408 and not stored).
const script = `
  const { uploadFile } = await import(${JSON.stringify(path.join(__dirname, '../public/upload.js'))});
  const { ApiError } = await import(${JSON.stringify(path.join(__dirname, '../public/api.js'))});
  let now = 0;
  Date.now = () => now;
  const BYTES_PER_MS = Number(process.argv[1]); // the link
  const stored = [];
  const puts = [];
  let received = 0;
  const LOSE_CREATE = process.argv[3] === 'lose-create';
  const posts = []; // each create's Idempotency-Key
  const keys = new Set();
  let created = 0; // uploads the API made: one per key, one per create without a key
  const client = {
    async request(method, _path, opts) {
      if (method !== 'POST') return { receivedBytes: received };
      const key = opts?.headers?.['Idempotency-Key'] ?? null;
      posts.push(key);
      if (key === null || !keys.has(key)) created++;
      keys.add(key);
      if (LOSE_CREATE && posts.length === 1) throw new ApiError(0, { code: 'network', message: 'lost' });
      return { id: 'up_1', receivedBytes: 0 };
    },
    async putChunk(id, blob) {
      const ms = blob.size / BYTES_PER_MS;
      now += Math.min(ms, 300_000);
      if (ms > 300_000) {
        puts.push(-blob.size);
        throw new ApiError(408, { code: 'request_timeout', message: 'not received in time', retryable: true });
      }
      puts.push(blob.size);
      stored.push(Buffer.from(await blob.arrayBuffer()));
      received += blob.size;
      return { receivedBytes: received };
    },
  };
  const file = new Blob([Buffer.alloc(Number(process.argv[2]), 7)]);
  const out = await uploadFile(client, file, { maxAttempts: 3 }).then(
    (id) => ({ id }),
    (e) => ({ error: e.code }),
  );
  console.log(JSON.stringify({ ...out, puts, posts, created, bytes: Buffer.concat(stored).length, seconds: now / 1000 }));
`;

function upload(bytesPerMs: number, size: number, fault = '') {
  const r = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', script, String(bytesPerMs), String(size), fault],
    {
      encoding: 'utf8',
      timeout: 20_000,
    },
  );
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as {
    id?: string;
    error?: string;
    puts: number[];
    posts: (string | null)[];
    created: number;
    bytes: number;
    seconds: number;
  };
}

describe('try page upload on a slow link', () => {
  it('20 KB/s, 10 MB: chunks sized to about 30 s each, none refused (16 MiB chunks were refused 408 every time)', () => {
    const r = upload(20, 10_000_000);
    expect(r.error).toBeUndefined();
    expect(r.bytes).toBe(10_000_000);
    expect(r.puts.every((n) => n > 0)).toBe(true);
    expect(r.puts[0]).toBe(1024 * 1024);
    expect(Math.max(...r.puts.slice(1))).toBe(600_000);
    expect(r.seconds).toBeCloseTo(500, 0);
  });

  it('3 KB/s: the first 1 MiB chunk is refused, and halved chunks go through', () => {
    const r = upload(3, 1_500_000);
    expect(r.error).toBeUndefined();
    expect(r.bytes).toBe(1_500_000);
    expect(r.puts.slice(0, 2)).toEqual([-1024 * 1024, 512 * 1024]);
  });

  it('on a fast link chunks grow 4 times a step to 16 MiB', () => {
    const r = upload(100_000, 40 * 1024 * 1024);
    const MiB = 1024 * 1024;
    expect(r.puts).toEqual([MiB, 4 * MiB, 16 * MiB, 16 * MiB, 3 * MiB]);
  });

  it('a create whose answer is lost is tried again under the same Idempotency-Key: one upload', () => {
    const r = upload(100_000, 1000, 'lose-create');
    expect(r.error).toBeUndefined();
    expect(r.posts).toHaveLength(2);
    expect(r.posts[0]).toMatch(/^try-up-[0-9a-f]{32}$/);
    expect(r.posts[1]).toBe(r.posts[0]);
    expect(r.created).toBe(1);
    expect(r.bytes).toBe(1000);
  });
});
