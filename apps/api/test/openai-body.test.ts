import { readdir } from 'node:fs/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { BlobStore } from '@hark/storage';
import { type TestAccount, createTestAccount, waitFor } from '@hark/testing';
import { createApp } from '../src/app';
import { type TestApi, rawRequest, startTestApi } from './helpers';

// How POST /v1/audio/* reads its body: the file goes to the blob store as it arrives and
// nothing of it stays in memory while the request waits for its transcript; a slow store is
// not the client's silence; an account has a bounded number of requests waiting at once.

const MiB = 1024 * 1024;
const BOUNDARY = 'hark-test-boundary';

type Part = { name: string; value: string } | { name: string; file: Buffer };

/** A multipart body's pieces, in order (a file's bytes are the caller's buffer, not a copy). */
function multipart(parts: Part[]): Buffer[] {
  const out: Buffer[] = [];
  for (const p of parts) {
    const head =
      'file' in p
        ? `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"; filename="a.wav"\r\n` +
          'Content-Type: application/octet-stream\r\n\r\n'
        : `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n`;
    out.push(Buffer.from(head), 'file' in p ? p.file : Buffer.from(p.value), Buffer.from('\r\n'));
  }
  out.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return out;
}

/** Sends `parts` to POST /v1/audio/transcriptions on `port`, all at once: the request and its answer. */
function send(port: number, a: TestAccount, parts: Part[]) {
  const body = multipart(parts);
  const call = rawRequest(port, 'POST', '/v1/audio/transcriptions', {
    ...a.auth,
    'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
    'Content-Length': body.reduce((n, b) => n + b.length, 0),
  });
  for (const b of body) call.req.write(b);
  call.req.end();
  return {
    ...call,
    /** Hangs up without waiting for the answer. */
    hangUp: () => {
      call.response.catch(() => undefined);
      call.req.destroy();
    },
  };
}

const error = (
  status: number,
  code: string,
  type = 'invalid_request_error',
  param: string | null = null,
) => ({ status, error: { message: expect.any(String), type, param, code } });
const outcome = (r: { status: number; body: string }) => {
  const parsed = JSON.parse(r.body) as { error?: unknown };
  return { status: r.status, error: parsed.error };
};

const transcriptsOf = (api: TestApi, a: TestAccount) =>
  api.db.transcript.count({ where: { accountId: a.accountId } });

describe('memory while requests wait', () => {
  let api: TestApi;
  beforeAll(() => {
    api = startTestApi({ openaiWaitSeconds: 120 });
  });
  afterAll(() => api.close());

  it('holds none of the files: what the process keeps does not grow with the requests waiting', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const held = () => {
      gc();
      gc();
      return process.memoryUsage().arrayBuffers;
    };
    const port = await api.listen();
    // One file, sent by every request (the client keeps this one buffer, never a copy).
    const file = Buffer.alloc(8 * MiB, 1);
    const accounts = await Promise.all(
      Array.from({ length: 6 }, () =>
        createTestAccount(api.db, api.secret, { toppedUp: true, credits: 1000 }),
      ),
    );
    const before = held();
    const calls = accounts.map((a) =>
      send(port, a, [
        { name: 'model', value: 'whisper-1' },
        { name: 'file', file },
      ]),
    );
    try {
      // Every file stored, every transcript created: the six requests now wait.
      await waitFor(
        async () =>
          (await api.db.transcript.count({
            where: { accountId: { in: accounts.map((a) => a.accountId) } },
          })) === 6,
        { timeout: 30_000 },
      );
      const grown = held() - before;
      // Before: each waiting request kept its 8 MiB file (multer's memory storage), 48 MiB.
      expect(grown).toBeLessThan(4 * MiB);
    } finally {
      for (const c of calls) c.hangUp();
    }
  });
});

/**
 * `blobs` whose appends store in lumps of `lumpBytes`, each taking `ms` while the store reads
 * nothing: an object store under ~1 MiB/s (an S3 part longer than the idle watch).
 */
function slowStore(blobs: BlobStore, lumpBytes: number, ms: number): BlobStore {
  async function* lumps(body: AsyncIterable<Buffer>) {
    let lump: Buffer[] = [];
    let bytes = 0;
    for await (const chunk of body) {
      lump.push(chunk);
      bytes += chunk.length;
      if (bytes < lumpBytes) continue;
      await new Promise((r) => setTimeout(r, ms));
      yield* lump;
      [lump, bytes] = [[], 0];
    }
    await new Promise((r) => setTimeout(r, ms));
    yield* lump;
  }
  return new Proxy(blobs, {
    get(target, p) {
      if (p === 'appendAt')
        return (
          key: string,
          at: Parameters<BlobStore['appendAt']>[1],
          body: AsyncIterable<Buffer>,
          opts: Parameters<BlobStore['appendAt']>[3],
        ) => target.appendAt(key, at, lumps(body), opts);
      const v = Reflect.get(target, p, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

describe('a slow blob store', () => {
  let api: TestApi;
  let server: ReturnType<typeof createApp>;
  beforeAll(() => {
    // The idle watch drops a body after 1 s without a byte (two thirds of the lock's TTL).
    api = startTestApi({ openaiWaitSeconds: 1, uploadLockTtlMs: 1500 });
    server = createApp({ ...api.deps, blobs: slowStore(api.deps.blobs, MiB, 1500) });
  });
  afterAll(async () => {
    await server.close();
    await api.close();
  });

  it('is not the silence of a client that sent its whole file: the transcript is created', async () => {
    const http = await import('node:http');
    const own = http.createServer(server);
    await new Promise<void>((r) => own.listen(0, '127.0.0.1', r));
    try {
      const port = (own.address() as { port: number }).port;
      const a = await createTestAccount(api.db, api.secret, { toppedUp: true, credits: 1000 });
      const file = Buffer.alloc(3 * MiB + 1000, 7);
      const res = await send(port, a, [
        { name: 'model', value: 'whisper-1' },
        { name: 'file', file },
      ]).response;
      // Before: the route's `Readable.from(buffer)` had handed over all its bytes at once, so
      // the watch dropped it while the store wrote them: 408, which the clients retry forever.
      expect(outcome(res)).toEqual(error(504, 'transcription_timeout', 'timeout_error'));
      const row = await api.db.transcript.findFirst({
        where: { accountId: a.accountId },
        select: { upload: { select: { receivedBytes: true } } },
      });
      expect(Number(row?.upload?.receivedBytes)).toBe(file.length);
    } finally {
      own.closeAllConnections();
      await new Promise((r) => own.close(r));
    }
  });
});

describe('a client that goes silent', () => {
  let api: TestApi;
  beforeAll(() => {
    api = startTestApi({ openaiWaitSeconds: 30, uploadLockTtlMs: 1500 }); // dropped after 1 s
  });
  afterAll(() => api.close());

  it('after its file, before the fields that follow it: dropped, nothing stored, its place freed', async () => {
    const port = await api.listen();
    const a = await createTestAccount(api.db, api.secret, { toppedUp: true, credits: 1000 });
    const body = multipart([
      { name: 'file', file: Buffer.alloc(MiB, 5) },
      { name: 'model', value: 'whisper-1' },
    ]);
    const call = rawRequest(port, 'POST', '/v1/audio/transcriptions', {
      ...a.auth,
      'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
      'Content-Length': body.reduce((n, b) => n + b.length, 0),
    });
    call.req.write(Buffer.concat(body.slice(0, 3))); // the file part, then nothing
    const started = Date.now();
    await expect(call.response).rejects.toThrow(); // its connection is closed
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(await api.db.upload.count({ where: { accountId: a.accountId } })).toBe(0);
    await waitFor(async () => (await readdir(api.deps.config.storageDir)).length === 0);
    // Freed once the request's handler is through (the client saw its connection close before).
    const places = `${api.deps.config.redisPrefix}:openai-waiting:${a.accountId}`;
    await waitFor(async () => (await api.redis.zcard(places)) === 0);
  });
});

describe('requests waiting per account (HARK_OPENAI_WAITING_PER_ACCOUNT)', () => {
  let api: TestApi;
  let port: number;
  beforeAll(async () => {
    api = startTestApi({ openaiWaitSeconds: 30, openaiWaitingPerAccount: 2 } as never);
    port = await api.listen();
  });
  afterAll(() => api.close());

  const audio = (a: TestAccount) =>
    send(port, a, [
      { name: 'model', value: 'whisper-1' },
      { name: 'file', file: Buffer.alloc(4000) },
    ]);

  it('past the cap: 429 in OpenAI shape at once, nothing stored; other accounts and freed places are not affected', async () => {
    const a = await createTestAccount(api.db, api.secret, { toppedUp: true, credits: 1000 });
    const first = [audio(a), audio(a)];
    try {
      await waitFor(async () => (await transcriptsOf(api, a)) === 2);
      const started = Date.now();
      const third = await audio(a).response;
      expect(Date.now() - started).toBeLessThan(5000);
      expect(outcome(third)).toEqual(error(429, 'too_many_waiting_requests', 'requests'));
      expect(await transcriptsOf(api, a)).toBe(2);
      expect(await api.db.upload.count({ where: { accountId: a.accountId } })).toBe(2);

      // Another account is not held to this one's requests.
      const b = await createTestAccount(api.db, api.secret, { toppedUp: true, credits: 1000 });
      const other = audio(b);
      await waitFor(async () => (await transcriptsOf(api, b)) === 1);
      other.hangUp();

      // A client that hangs up frees its place.
      first[0]!.hangUp();
      first.push(
        await waitFor(async () => {
          const next = audio(a);
          const done = await Promise.race([
            next.response.then((r) => r.status),
            waitFor(async () => (await transcriptsOf(api, a)) === 3, { timeout: 2000 }).then(() => 0),
          ]);
          return done === 0 ? next : null;
        }),
      );
    } finally {
      for (const c of first) c.hangUp();
    }
  });
});

describe('form fields', () => {
  let api: TestApi;
  let port: number;
  beforeAll(async () => {
    api = startTestApi({ openaiWaitSeconds: 1 });
    port = await api.listen();
  });
  afterAll(() => api.close());

  it('the file before the fields (the npm client): refused fields leave no upload and no blob behind', async () => {
    const a = await createTestAccount(api.db, api.secret, { toppedUp: true, credits: 1000 });
    const res = await send(port, a, [
      { name: 'file', file: Buffer.alloc(2 * MiB, 3) },
      { name: 'model', value: 'whisper-9' },
    ]).response;
    expect(outcome(res)).toEqual(error(400, 'model_not_found', 'invalid_request_error', 'model'));
    expect(await api.db.upload.count({ where: { accountId: a.accountId } })).toBe(0);
    expect(await readdir(api.deps.config.storageDir)).toEqual([]);

    const ok = await send(port, a, [
      { name: 'file', file: Buffer.alloc(2 * MiB, 3) },
      { name: 'model', value: 'whisper-1' },
      { name: 'response_format', value: 'text' },
    ]).response;
    expect(outcome(ok)).toEqual(error(504, 'transcription_timeout', 'timeout_error'));
  });

  it('multipart without a boundary: 400 invalid_body, and the API carries on', async () => {
    const a = await createTestAccount(api.db, api.secret, { toppedUp: true, credits: 1000 });
    const call = rawRequest(port, 'POST', '/v1/audio/transcriptions', {
      ...a.auth,
      'Content-Type': 'multipart/form-data',
      'Content-Length': 5,
    });
    call.req.end('hello');
    expect(outcome(await call.response)).toEqual(error(400, 'invalid_body'));
    const again = await send(port, a, [
      { name: 'model', value: 'whisper-9' },
      { name: 'file', file: Buffer.alloc(10) },
    ]).response;
    expect(outcome(again)).toEqual(error(400, 'model_not_found', 'invalid_request_error', 'model'));
  });

  it('more than 256 KiB of fields in all: 413, nothing stored', async () => {
    const a = await createTestAccount(api.db, api.secret, { toppedUp: true, credits: 1000 });
    const long = 'x'.repeat(60 * 1024);
    const res = await send(port, a, [
      { name: 'model', value: 'whisper-1' },
      ...Array.from({ length: 5 }, (_, i) => ({ name: `x${i}`, value: long })),
      { name: 'file', file: Buffer.alloc(4000) },
    ]).response;
    expect(outcome(res)).toEqual(error(413, 'fields_too_large'));
    expect(await api.db.upload.count({ where: { accountId: a.accountId } })).toBe(0);
  });
});
