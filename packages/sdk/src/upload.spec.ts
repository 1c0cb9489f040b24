import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { ReadableStream } from 'node:stream/web';
import { Hark, type UploadProgress } from './client';
import { HarkUploadError } from './errors';
import { FakeApi, envelope } from './fake-api.fixture';
import type { Fetch } from './transport';

const audio = randomBytes(100);
const sha = createHash('sha256').update(audio).digest('hex');

function client(api: FakeApi) {
  const sleeps: number[] = [];
  const hark = new Hark({
    apiKey: 'tk_test',
    baseUrl: 'http://hark.test',
    fetch: api.fetch,
    sleep: async (ms) => void sleeps.push(ms),
    random: () => 0.5,
  });
  return { hark, sleeps };
}

/** Offsets of the PUT bodies, reconstructed from their lengths and the GETs' resets. */
const putSizes = (api: FakeApi) => api.of('PUT').map((r) => r.body?.length ?? 0);

describe('upload: buffers', () => {
  it('creates with expectedBytes and sha256, then PUTs chunks in order, reporting progress', async () => {
    const api = new FakeApi();
    const { hark } = client(api);
    const progress: UploadProgress[] = [];
    const up = await hark.upload(audio, { chunkBytes: 40, onProgress: (p) => progress.push(p) });
    const [post] = api.of('POST');
    expect(Object.fromEntries(post!.query)).toEqual({ expectedBytes: '100', sha256: sha });
    expect(post!.body).toBeNull();
    expect(putSizes(api)).toEqual([40, 40, 20]);
    expect(api.of('PUT').every((r) => r.headers.get('content-type') === 'application/octet-stream')).toBe(
      true,
    );
    expect(progress.map((p) => p.receivedBytes)).toEqual([0, 40, 80, 100]);
    expect(progress.every((p) => p.totalBytes === 100 && p.uploadId === up.id)).toBe(true);
    expect(up).toMatchObject({ receivedBytes: 100, expectedBytes: 100, sha256: sha });
    expect(api.stored(up.id).sha256).toBe(sha);
  });

  it('on a fast link chunks grow from 256 KiB to 16 MiB (4 times a step); larger ones are refused', async () => {
    const api = new FakeApi();
    const { hark } = client(api);
    const KiB = 1024;
    const sizes = [256 * KiB, 1024 * KiB, 4096 * KiB, 16384 * KiB, 16384 * KiB, 5];
    const big = Buffer.alloc(
      sizes.reduce((a, b) => a + b),
      1,
    );
    await hark.upload(big, { sha256: false });
    expect(putSizes(api)).toEqual(sizes);
    expect(api.of('POST')[0]!.query.get('sha256')).toBeNull();
    await expect(hark.upload(big, { chunkBytes: 16 * 1024 * 1024 + 1 })).rejects.toThrow(RangeError);
  });

  it('a chunk that never arrived: back off, read receivedBytes, send it again', async () => {
    const api = new FakeApi().fault('PUT', '/v1/uploads/', 'network');
    const { hark, sleeps } = client(api);
    const up = await hark.upload(audio, { chunkBytes: 40 });
    expect(putSizes(api)).toEqual([40, 40, 40, 20]);
    expect(api.of('GET')).toHaveLength(1);
    expect(sleeps).toEqual([375]);
    expect(api.stored(up.id).sha256).toBe(sha);
  });

  it('a chunk stored whose answer was lost: resumes after it, sending nothing twice', async () => {
    const api = new FakeApi().faultNth('PUT', '/v1/uploads/', [2], 'lose-answer');
    const { hark } = client(api);
    const progress: number[] = [];
    const up = await hark.upload(audio, {
      chunkBytes: 40,
      onProgress: (p) => progress.push(p.receivedBytes),
    });
    expect(putSizes(api)).toEqual([40, 40, 20]);
    expect(api.of('GET')).toHaveLength(1);
    expect(progress).toEqual([0, 40, 80, 100]);
    expect(api.stored(up.id).bytes.equals(audio)).toBe(true);
  });

  it('upload_busy (409, retryable) and 5xx are retried; Retry-After is honoured', async () => {
    const api = new FakeApi()
      .fault('PUT', '/v1/uploads/', envelope(409, 'upload_busy', true))
      .fault('PUT', '/v1/uploads/', envelope(429, 'rate_limited', true, { 'Retry-After': '3' }))
      .fault('PUT', '/v1/uploads/', envelope(500, 'internal', true));
    const { hark, sleeps } = client(api);
    const up = await hark.upload(audio, { chunkBytes: 64 });
    expect(sleeps).toEqual([375, 3000, 1500]);
    expect(api.stored(up.id).sha256).toBe(sha);
  });

  it('an outage that also fails the resume read is retried like a lost chunk, not the end', async () => {
    // The 2nd PUT meets a dead network, then 4 reads of where the upload stands do too (the
    // transport's own retries of one read are 3): the read counts as one more failed try.
    const api = new FakeApi()
      .faultNth('PUT', '/v1/uploads/', [2], 'network')
      .fault('GET', '/v1/uploads/', 'network', 4);
    const { hark } = client(api);
    const up = await hark.upload(audio, { chunkBytes: 40, maxChunkRetries: 5 });
    expect(api.stored(up.id).bytes.equals(audio)).toBe(true);
    expect(api.of('GET').length).toBeGreaterThanOrEqual(5);
  });

  it("a proxy's bare 408 (no envelope) is retried, and the chunks shrink", async () => {
    const bare408 = () => new Response('<html>408 Request Time-out</html>', { status: 408 });
    const api = new FakeApi().fault('PUT', '/v1/uploads/', bare408);
    const { hark } = client(api);
    const big = randomBytes(2 * 1024 * 1024);
    const up = await hark.upload(big, { chunkBytes: 1024 * 1024 });
    expect(api.stored(up.id).bytes.equals(big)).toBe(true);
    // The first chunk (256 KiB) timed out: it is sent again at half the size.
    expect(putSizes(api).slice(0, 2)).toEqual([256 * 1024, 128 * 1024]);
  });

  it('a refusal that will not change (chunk_too_large) is thrown at once', async () => {
    const api = new FakeApi().fault('PUT', '/v1/uploads/', envelope(413, 'chunk_too_large', false));
    const { hark, sleeps } = client(api);
    await expect(hark.upload(audio)).rejects.toMatchObject({ code: 'chunk_too_large', status: 413 });
    expect(sleeps).toEqual([]);
    expect(api.of('PUT')).toHaveLength(1);
  });

  it('gives up after maxChunkRetries failures in a row', async () => {
    const api = new FakeApi().fault('PUT', '/v1/uploads/', 'network', 100);
    const { hark } = client(api);
    await expect(hark.upload(audio, { maxChunkRetries: 2 })).rejects.toMatchObject({
      name: 'HarkNetworkError',
    });
    expect(api.of('PUT')).toHaveLength(3);
  });

  it('the failure count starts again after each stored chunk', async () => {
    // Two failures before each of the three chunks: within maxChunkRetries 2 every time.
    const api = new FakeApi().faultNth('PUT', '/v1/uploads/', [1, 2, 4, 5, 7, 8], 'network');
    const { hark } = client(api);
    const up = await hark.upload(audio, { chunkBytes: 40, maxChunkRetries: 2 });
    expect(putSizes(api)).toEqual([40, 40, 40, 40, 40, 40, 20, 20, 20]);
    expect(api.stored(up.id).sha256).toBe(sha);
  });

  it('a slow link: chunks are sized to it, so none times out (fixed 16 MiB chunks never arrived)', async () => {
    // About 1 MB/s, and a 600 ms request time-out: 1.5 MB in one PUT cannot make it.
    const api = new FakeApi();
    const link: Fetch = async (input, init) => {
      const bytes = init.method === 'PUT' ? (init.body as Uint8Array).byteLength : 0;
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(resolve, bytes / 1000);
        init.signal?.addEventListener('abort', () => (clearTimeout(t), reject(new Error('aborted'))), {
          once: true,
        });
      });
      return api.fetch(input, init);
    };
    const big = randomBytes(1_500_000);
    const hark = new Hark({
      apiKey: 'tk_test',
      baseUrl: 'http://hark.test',
      fetch: link,
      timeoutMs: 600,
      sleep: async () => {},
    });
    const up = await hark.upload(big);
    expect(api.stored(up.id).bytes.equals(big)).toBe(true);
    expect(api.of('GET')).toEqual([]); // no PUT failed, so none had to be resumed
    const sizes = putSizes(api);
    expect(sizes[0]).toBe(256 * 1024);
    expect(Math.max(...sizes)).toBeLessThan(400_000); // about a third of the time-out's worth
  });

  it('continues an existing upload from its receivedBytes', async () => {
    const api = new FakeApi();
    const { hark } = client(api);
    const first = await hark.uploads.create({ expectedBytes: 100, sha256: sha, body: audio.subarray(0, 30) });
    const up = await hark.upload(audio, { uploadId: first.id, chunkBytes: 50 });
    expect(api.of('POST')).toHaveLength(1);
    expect(putSizes(api)).toEqual([50, 20]);
    expect(up).toMatchObject({ id: first.id, receivedBytes: 100 });
    expect(api.stored(up.id).sha256).toBe(sha);
  });

  it('refuses to continue another file’s upload (size, digest or length), sending nothing to it', async () => {
    const api = new FakeApi();
    const { hark } = client(api);
    const other = randomBytes(100);
    const first = await hark.uploads.create({ expectedBytes: 100, sha256: sha, body: audio.subarray(0, 30) });
    const err = await hark.upload(other, { uploadId: first.id }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HarkUploadError);
    expect((err as HarkUploadError).message).toMatch(/another sha256/);
    expect(err).toMatchObject({ uploadId: first.id, receivedBytes: 30 });
    await expect(hark.upload(audio.subarray(0, 99), { uploadId: first.id })).rejects.toThrow(
      /declared 100 bytes/,
    );
    const undeclared = await hark.uploads.create({ body: audio.subarray(0, 60) });
    await expect(
      hark.upload(audio.subarray(0, 50), { uploadId: undeclared.id, sha256: false }),
    ).rejects.toThrow(/holds 60 bytes/);
    expect(api.of('PUT')).toEqual([]);
    expect(api.stored(first.id).bytes.equals(audio.subarray(0, 30))).toBe(true);
    await expect(hark.upload(audio, { uploadId: first.id, idempotencyKey: 'k' })).rejects.toThrow(RangeError);
  });

  it('an Idempotency-Key: a lost create answer makes one upload, and a second call with the key goes on from its receivedBytes', async () => {
    const api = new FakeApi()
      .fault('POST', '/v1/uploads', 'lose-answer')
      .faultNth('PUT', '/v1/uploads/', [2], 'network');
    const { hark } = client(api);
    // The first call gives up on the second chunk (a crash, as the caller sees it).
    await expect(
      hark.upload(audio, { chunkBytes: 40, maxChunkRetries: 0, idempotencyKey: 'file-a' }),
    ).rejects.toThrow();
    const posts = api.of('POST');
    expect(posts.map((p) => p.headers.get('idempotency-key'))).toEqual(['file-a', 'file-a']);
    expect(api.uploads.size).toBe(1);
    const up = await hark.upload(audio, { chunkBytes: 40, idempotencyKey: 'file-a' });
    expect(api.uploads.size).toBe(1);
    expect(putSizes(api)).toEqual([40, 40, 40, 20]); // the refused second chunk, then the rest
    expect(api.stored(up.id).bytes.equals(audio)).toBe(true);
    // Without a key of its own each call sends a fresh random one.
    await hark.upload(audio);
    await hark.upload(audio);
    const keys = api
      .of('POST')
      .slice(3)
      .map((p) => p.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).toBe(2);
  });

  it('refuses empty audio', async () => {
    const api = new FakeApi();
    await expect(client(api).hark.upload(Buffer.alloc(0))).rejects.toBeInstanceOf(HarkUploadError);
    expect(api.requests).toHaveLength(0);
  });
});

describe('upload: files', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'hark-sdk-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads a file by path: size and sha256 declared, chunks read at their offsets, resumable', async () => {
    const file = path.join(dir, 'a.wav');
    await writeFile(file, audio);
    const api = new FakeApi()
      .fault('PUT', '/v1/uploads/', 'lose-answer')
      .fault('PUT', '/v1/uploads/', 'network');
    const { hark } = client(api);
    const up = await hark.upload(file, { chunkBytes: 30 });
    expect(Object.fromEntries(api.of('POST')[0]!.query)).toEqual({ expectedBytes: '100', sha256: sha });
    expect(api.stored(up.id).bytes.equals(audio)).toBe(true);
  });

  it('a missing file fails before any request', async () => {
    const api = new FakeApi();
    await expect(client(api).hark.upload(path.join(dir, 'nope.wav'))).rejects.toMatchObject({
      code: 'ENOENT',
    });
    expect(api.requests).toHaveLength(0);
  });
});

describe('upload: streams', () => {
  /** A Node Readable of `bytes` in pieces of `piece` bytes. */
  const pieces = (bytes: Buffer, piece: number) => {
    const out: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += piece) out.push(bytes.subarray(i, i + piece));
    return out;
  };

  it('a Node Readable of small pieces is cut into full chunks; size and digest unknown unless given', async () => {
    const api = new FakeApi();
    const { hark } = client(api);
    const progress: (number | null)[] = [];
    const up = await hark.upload(Readable.from(pieces(audio, 7)), {
      chunkBytes: 32,
      onProgress: (p) => progress.push(p.totalBytes),
    });
    expect(Object.fromEntries(api.of('POST')[0]!.query)).toEqual({});
    expect(putSizes(api)).toEqual([32, 32, 32, 4]);
    expect(progress.every((t) => t === null)).toBe(true);
    expect(api.stored(up.id).bytes.equals(audio)).toBe(true);
  });

  it('declares expectedBytes and sha256 when given, and resumes inside the held chunk', async () => {
    const api = new FakeApi()
      .fault('PUT', '/v1/uploads/', 'network')
      .fault('PUT', '/v1/uploads/', 'lose-answer');
    const { hark } = client(api);
    const up = await hark.upload(Readable.from(pieces(audio, 9)), {
      expectedBytes: 100,
      sha256: sha,
      chunkBytes: 32,
    });
    expect(Object.fromEntries(api.of('POST')[0]!.query)).toEqual({ expectedBytes: '100', sha256: sha });
    expect(api.stored(up.id).bytes.equals(audio)).toBe(true);
  });

  it('a web ReadableStream works the same', async () => {
    const api = new FakeApi();
    const { hark } = client(api);
    const parts = pieces(audio, 33);
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        const next = parts.shift();
        if (next) c.enqueue(new Uint8Array(next));
        else c.close();
      },
    });
    const up = await hark.upload(stream, { chunkBytes: 50 });
    expect(putSizes(api)).toEqual([50, 50]);
    expect(api.stored(up.id).bytes.equals(audio)).toBe(true);
  });

  it('a stream that ends short of expectedBytes fails with HarkUploadError', async () => {
    const api = new FakeApi();
    const err = await client(api)
      .hark.upload(Readable.from([audio.subarray(0, 60)]), { expectedBytes: 100 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HarkUploadError);
    expect(err).toMatchObject({ receivedBytes: 60 });
  });

  it('a stream cannot rewind past the chunk it holds', async () => {
    // The upload loses bytes the client had already seen stored (truncated behind its back).
    const api = new FakeApi();
    api.faultNth('PUT', '/v1/uploads/', [3], (r) => {
      api.uploads.get(r.path.split('/').pop()!)!.data = Buffer.alloc(0);
      return 'network';
    });
    const err = await client(api)
      .hark.upload(Readable.from(pieces(audio, 10)), { chunkBytes: 40 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HarkUploadError);
    expect((err as Error).message).toMatch(/cannot rewind/);
  });
});

describe('upload: abort and early refusals', () => {
  /** Yields one piece, then never another (a download that hangs); records `return()`. */
  const stalledIterable = () => {
    const state = { returned: false };
    const iterable: AsyncIterable<Uint8Array> = {
      [Symbol.asyncIterator]: () => {
        let n = 0;
        return {
          next: () =>
            n++ === 0
              ? Promise.resolve({ done: false, value: audio.subarray(0, 10) })
              : new Promise<IteratorResult<Uint8Array>>(() => {}),
          return: async () => {
            state.returned = true;
            return { done: true, value: undefined };
          },
        };
      },
    };
    return { iterable, state };
  };

  /** Aborts after `ms`; the promise settles with how long after the abort `run` settled. */
  async function settleAfterAbort(run: (signal: AbortSignal) => Promise<unknown>, ms = 20) {
    const ac = new AbortController();
    let abortedAt = 0;
    setTimeout(() => {
      abortedAt = Date.now();
      ac.abort(new Error('user abort'));
    }, ms);
    const err = await run(ac.signal).catch((e: unknown) => e);
    return { err, afterAbortMs: Date.now() - abortedAt };
  }

  it('an abort while a stream stalls rejects at once with the reason, and ends the stream', async () => {
    const api = new FakeApi();
    const { hark } = client(api);
    const { iterable, state } = stalledIterable();
    const { err } = await settleAfterAbort((signal) => hark.upload(iterable, { signal, chunkBytes: 40 }));
    expect(err).toMatchObject({ message: 'user abort' });
    expect(state.returned).toBe(true);

    // A Node Readable's iterator would wait for the stalled read before returning: it is destroyed.
    const readable = new Readable({ read() {} });
    readable.push(audio.subarray(0, 10));
    const node = await settleAfterAbort((signal) => hark.upload(readable, { signal, chunkBytes: 40 }));
    expect(node.err).toMatchObject({ message: 'user abort' });
    expect(readable.destroyed).toBe(true);

    let canceled = false;
    const web = new ReadableStream<Uint8Array>({
      start: (c) => c.enqueue(new Uint8Array(audio.subarray(0, 10))),
      cancel: () => void (canceled = true),
    });
    const webRun = await settleAfterAbort((signal) => hark.upload(web, { signal, chunkBytes: 40 }));
    expect(webRun.err).toMatchObject({ message: 'user abort' });
    expect(canceled).toBe(true);
    expect(api.of('PUT')).toHaveLength(0);
  });

  it('an abort while a large file is hashed stops the hashing, before any request', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'hark-sdk-'));
    try {
      // 256 MiB (sparse: no disk used) takes over a second to hash; the abort must not wait for it.
      const file = path.join(dir, 'big.wav');
      const handle = await open(file, 'w');
      await handle.truncate(256 * 1024 * 1024);
      await handle.close();
      const api = new FakeApi();
      const { hark } = client(api);
      const { err, afterAbortMs } = await settleAfterAbort((signal) => hark.upload(file, { signal }));
      expect(err).toMatchObject({ message: 'user abort' });
      expect(afterAbortMs).toBeLessThan(500);
      expect(api.requests).toHaveLength(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('an invalid chunkBytes is refused, and a stream passed in is closed all the same', async () => {
    const api = new FakeApi();
    const { hark } = client(api);
    const readable = Readable.from([audio]);
    await expect(hark.upload(readable, { chunkBytes: 0 })).rejects.toThrow(RangeError);
    expect(readable.destroyed).toBe(true);
    const { iterable, state } = stalledIterable();
    await expect(hark.upload(iterable, { chunkBytes: 1.5 })).rejects.toThrow(RangeError);
    expect(state.returned).toBe(true);
    expect(api.requests).toHaveLength(0);
  });
});
