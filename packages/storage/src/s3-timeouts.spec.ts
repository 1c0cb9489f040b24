import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BlobStoreUnavailableError } from './blob-errors';
import { S3BlobStore } from './s3-blob-store';
import { createS3Client } from './s3-client';

// A store that accepts every connection and never answers (a wedged proxy, a load balancer whose
// backends are gone): each call must give up within its time-outs, as unavailable, and an abort
// must end a call at once. Before the client had time-outs, an append there hung for ever while
// the API kept extending its upload lock.

let server: net.Server;
let endpoint: string;
const sockets = new Set<net.Socket>();
let scratch: string;
const env = { ...process.env };

beforeAll(async () => {
  // The SDK signs every request: made-up credentials, so it never looks for real ones.
  process.env.AWS_ACCESS_KEY_ID = 'hark-spec-key';
  process.env.AWS_SECRET_ACCESS_KEY = 'hark-spec-secret';
  server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.resume(); // reads the request, never writes a byte
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  scratch = await mkdtemp(path.join(tmpdir(), 'hark-s3-hang-'));
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
  await rm(scratch, { recursive: true, force: true });
  process.env = env;
});

function hungStore(requestTimeoutMs: number) {
  const client = createS3Client({
    bucket: 'b',
    prefix: 'uploads/',
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    connectTimeoutMs: 200,
    requestTimeoutMs,
  });
  return { client, store: new S3BlobStore(client, 'b', 'uploads/') };
}

async function* body(bytes: number): AsyncIterable<Buffer> {
  yield Buffer.alloc(bytes);
}
const opts = { maxBytes: 1 << 20, tooLarge: () => new Error('too large') };

/** What `run` rejected with, and after how long. */
async function outcome(run: () => Promise<unknown>): Promise<{ err: unknown; ms: number }> {
  const t0 = Date.now();
  const err = await run().then(
    () => null,
    (e: unknown) => e,
  );
  return { err, ms: Date.now() - t0 };
}

describe('S3 driver against a store that never answers', () => {
  it('every operation gives up as unavailable within its time-outs (three attempts of 300 ms)', async () => {
    const { client, store } = hungStore(300);
    try {
      const ops: [string, () => Promise<unknown>][] = [
        ['appendAt', () => store.appendAt('up_a', { offset: 0, uploadId: null }, body(10), opts)],
        ['appendAt (resumed)', () => store.appendAt('up_a', { offset: 10, uploadId: null }, body(10), opts)],
        ['fetchTo', () => store.fetchTo('up_a', 10, path.join(scratch, 'a'))],
        ['truncate', () => store.truncate('up_a', 0)],
        ['remove', () => store.remove('up_a')],
        ['exists', () => store.exists('up_a')],
        ['staleKeys', () => store.staleKeys(new Date(), { cursor: null, limit: 10 })],
      ];
      const results = await Promise.all(ops.map(async ([name, run]) => ({ name, ...(await outcome(run)) })));
      for (const r of results) {
        expect([r.name, r.err]).toEqual([r.name, expect.any(BlobStoreUnavailableError)]);
        // 3 × 300 ms plus the SDK's back-off between attempts; far from "for ever".
        expect([r.name, r.ms < 8000]).toEqual([r.name, true]);
      }
    } finally {
      client.destroy();
    }
  }, 20_000);

  it('an abort ends a call at once, with the reason it was given, long before the time-out', async () => {
    const { client, store } = hungStore(60_000);
    try {
      const reason = new Error('the client went away');
      const calls: [string, (signal: AbortSignal) => Promise<unknown>][] = [
        [
          'appendAt',
          (signal) => store.appendAt('up_b', { offset: 0, uploadId: null }, body(10), { ...opts, signal }),
        ],
        ['fetchTo', (signal) => store.fetchTo('up_b', 10, path.join(scratch, 'b'), { signal })],
        ['remove', (signal) => store.remove('up_b', { signal })],
        ['staleKeys', (signal) => store.staleKeys(new Date(), { cursor: null, limit: 10, signal })],
      ];
      const results = await Promise.all(
        calls.map(async ([name, run]) => {
          const ac = new AbortController();
          setTimeout(() => ac.abort(reason), 100);
          return { name, ...(await outcome(() => run(ac.signal))) };
        }),
      );
      for (const r of results) {
        expect([r.name, r.err]).toEqual([r.name, reason]);
        expect([r.name, r.ms < 2000]).toEqual([r.name, true]);
      }
    } finally {
      client.destroy();
    }
  }, 20_000);
});
