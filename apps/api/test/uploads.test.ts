import { createHash, randomBytes } from 'node:crypto';
import { readFile, rm, truncate } from 'node:fs/promises';
import path from 'node:path';
import request from 'supertest';
import { waitFor } from '@hark/testing';
import { apiTest, envelope, rawRequest } from './helpers';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const MiB = 1024 * 1024;

// These tests hold several GiB of declared and sparse uploads on one account: the quota
// (uploads-quota.test.ts) is lifted out of their way.
const api = apiTest({ config: { uploadLockTtlMs: 2000, uploadQuotaBytes: 64 * 1024 ** 3 }, account: {} });
let port: number;
beforeAll(async () => {
  port = await api.listen();
});

/** PUT a chunk of upload `id` as the block's account. */
const putChunk = (id: string, body: Buffer) =>
  request(api.app).put(`/v1/uploads/${id}`).set(api.auth).send(body);
const storedFile = (id: string) => path.join(api.deps.config.storageDir, id);

/** A raw request whose body we control byte by byte (supertest always sends whole bodies). */
const rawPut = (id: string, headers: Record<string, string | number>) =>
  rawRequest(port, 'PUT', `/v1/uploads/${id}`, { ...api.auth, ...headers });

async function newUpload(query = ''): Promise<string> {
  const res = await request(api.app).post(`/v1/uploads${query}`).set(api.auth).expect(201);
  return res.body.data.id as string;
}

describe('uploads', () => {
  it('POST with a body, PUT chunks, GET to resume: byte-exact reassembly', async () => {
    const file = randomBytes(5 * MiB + 123);
    const first = file.subarray(0, 2 * MiB);
    const created = await request(api.app)
      .post(`/v1/uploads?expectedBytes=${file.length}&sha256=${sha(file).toUpperCase()}`)
      .set(api.auth)
      .send(first)
      .expect(201);
    expect(created.headers['cache-control']).toBe('no-store');
    expect(created.body.data).toEqual({
      id: expect.stringMatching(/^up_/),
      receivedBytes: 2 * MiB,
      expectedBytes: file.length,
      sha256: sha(file),
      createdAt: expect.any(String),
    });
    expect(created.body.data.id.length).toBeLessThanOrEqual(36);
    const id = created.body.data.id as string;
    for (let off = 2 * MiB; off < file.length; off += 1 * MiB + 7) {
      const res = await request(api.app)
        .put(`/v1/uploads/${id}`)
        .set(api.auth)
        .send(file.subarray(off, Math.min(file.length, off + 1 * MiB + 7)))
        .expect(200);
      expect(res.body.data.receivedBytes).toBe(Math.min(file.length, off + 1 * MiB + 7));
    }
    const got = await request(api.app).get(`/v1/uploads/${id}`).set(api.auth).expect(200);
    expect(got.headers['cache-control']).toBe('no-store');
    expect(got.body.data.receivedBytes).toBe(file.length);
    expect(sha(await readFile(storedFile(id)))).toBe(sha(file));
    // The running digest kept in Postgres matches without re-reading the file.
    const { ResumableSha256 } = await import('@hark/storage');
    const row = await api.db.upload.findUniqueOrThrow({ where: { id } });
    expect(await (await ResumableSha256.start(row.hashState)).digestHex()).toBe(sha(file));
  });

  it('an empty POST creates an empty upload', async () => {
    const res = await request(api.app).post('/v1/uploads').set(api.auth).expect(201);
    expect(res.body.data).toMatchObject({ receivedBytes: 0, expectedBytes: null, sha256: null });
  });

  it('validates expectedBytes and sha256 with the spec keys, together', async () => {
    for (const bad of ['0', '-1', 'abc', '1.5', String(2 * 1024 ** 3 + 1), '99999999999']) {
      const res = await request(api.app).post(`/v1/uploads?expectedBytes=${bad}`).set(api.auth).expect(400);
      expect(res.body).toEqual(envelope('validation', false, { expectedBytes: 'expected_bytes_invalid' }));
    }
    const both = await request(api.app)
      .post(`/v1/uploads?expectedBytes=x&sha256=${'g'.repeat(64)}`)
      .set(api.auth)
      .expect(400);
    expect(both.body.error.fields).toEqual({
      expectedBytes: 'expected_bytes_invalid',
      sha256: 'sha256_invalid',
    });
    await request(api.app)
      .post(`/v1/uploads?sha256=${'a'.repeat(63)}`)
      .set(api.auth)
      .expect(400);
    await request(api.app)
      .post(`/v1/uploads?expectedBytes=${2 * 1024 ** 3}`)
      .set(api.auth)
      .expect(201);
  });

  it('chunk errors: empty, too large (declared and streamed), unknown and foreign uploads', async () => {
    const id = await newUpload();
    const empty = await putChunk(id, Buffer.alloc(0)).expect(400);
    expect(empty.body).toEqual(envelope('chunk_empty', false));
    const big = await putChunk(id, Buffer.alloc(16 * MiB + 1)).expect(413);
    expect(big.body).toEqual(envelope('chunk_too_large', false));
    // Chunked transfer: no Content-Length, refused once the count passes 16 MiB.
    const { req, response } = rawPut(id, { 'Transfer-Encoding': 'chunked' });
    req.on('error', () => undefined);
    for (let i = 0; i < 17; i++) req.write(Buffer.alloc(MiB));
    req.end();
    const streamed = await response;
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body).error.code).toBe('chunk_too_large');
    await putChunk(id, Buffer.alloc(16 * MiB)).expect(200);

    const other = await api.newAccount();
    for (const [auth, target] of [
      [other.auth, id],
      [api.auth, 'up_doesnotexist'],
      [api.auth, 'x'.repeat(80)],
    ] as const) {
      const res = await request(api.app)
        .put(`/v1/uploads/${target}`)
        .set(auth)
        .send(Buffer.from('x'))
        .expect(404);
      expect(res.body).toEqual(envelope('upload_not_found', false));
      await request(api.app).get(`/v1/uploads/${target}`).set(auth).expect(404);
    }
    const res = await request(api.app).get(`/v1/uploads/${id}`).set(api.auth).expect(200);
    expect(res.body.data.receivedBytes).toBe(16 * MiB);
  });

  it('refuses a file that would pass 2 GiB', async () => {
    const id = await newUpload();
    const nearly = 2 * 1024 ** 3 - 10;
    // A sparse file stands in for 2 GiB of earlier chunks.
    await putChunk(id, Buffer.from('x')).expect(200);
    await truncate(storedFile(id), nearly);
    await api.db.upload.update({ where: { id }, data: { receivedBytes: BigInt(nearly) } });
    const res = await putChunk(id, Buffer.alloc(11)).expect(413);
    expect(res.body).toEqual(envelope('upload_too_large', false));
    const ok = await putChunk(id, Buffer.alloc(10)).expect(200);
    expect(ok.body.data.receivedBytes).toBe(2 * 1024 ** 3);
  });

  it('refuses a POST body over 100 MB before reading it', async () => {
    const { req, response } = rawRequest(port, 'POST', '/v1/uploads', {
      ...api.auth,
      'Content-Length': 100_000_001,
    });
    req.write(Buffer.alloc(1024));
    const res = await response;
    req.destroy();
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual(envelope('payload_too_large', false));
    expect(res.connection).toBe('close');
  });

  it('two concurrent PUTs: exactly one 409 upload_busy, no interleaved bytes', async () => {
    const id = await newUpload();
    const a = Buffer.alloc(2 * MiB, 'a');
    const slow = rawPut(id, { 'Content-Length': a.length });
    slow.req.write(a.subarray(0, MiB));
    await waitFor(
      async () => (await api.redis.exists(`${api.deps.config.redisPrefix}:upload-lock:${id}`)) === 1,
      {
        message: 'first writer holds the lock',
      },
    );
    const second = await putChunk(id, Buffer.alloc(100, 'b')).expect(409);
    expect(second.body).toEqual(envelope('upload_busy', true));
    slow.req.end(a.subarray(MiB));
    expect((await slow.response).status).toBe(200);
    const content = await readFile(storedFile(id));
    expect(content.equals(a)).toBe(true);
  });

  it('an upload a transcript was created from takes no more chunks (409 upload_busy, not retryable)', async () => {
    const id = await newUpload();
    await putChunk(id, Buffer.alloc(1000, 'a')).expect(200);
    await request(api.app).post('/v1/transcripts').set(api.auth).send({ uploadId: id }).expect(201);
    const late = await putChunk(id, Buffer.alloc(100, 'b')).expect(409);
    expect(late.body).toEqual(envelope('upload_busy', false));
    expect(late.body.error.message).toMatch(/new upload/);
    const after = await request(api.app).get(`/v1/uploads/${id}`).set(api.auth).expect(200);
    expect(after.body.data.receivedBytes).toBe(1000);
    expect((await readFile(storedFile(id))).length).toBe(1000);
  });

  it('an upload whose stored bytes were lost answers 404 upload_not_found, never 500, and stays gone', async () => {
    // An operator cleaned the storage folder, or a disk was replaced: what Postgres recorded is
    // no longer there, so no chunk can be appended after it and no transcript made from it.
    for (const lose of [(id: string) => rm(storedFile(id)), (id: string) => truncate(storedFile(id), 10)]) {
      const created = await request(api.app).post('/v1/uploads').set(api.auth).send(Buffer.alloc(1000, 'a'));
      const id = created.body.data.id as string;
      await lose(id);
      const res = await putChunk(id, Buffer.alloc(100, 'b')).expect(404);
      expect(res.body).toEqual(envelope('upload_not_found', false));
      expect(res.body.error.message).toMatch(/stored bytes .* are gone.*new upload/);
      await request(api.app).get(`/v1/uploads/${id}`).set(api.auth).expect(404);
      await putChunk(id, Buffer.alloc(100, 'c')).expect(404);
      const row = await api.db.upload.findUniqueOrThrow({ where: { id } });
      expect(row.erasedAt).not.toBeNull();
      expect(row.receivedBytes).toBe(1000n);
      // Nor can a transcript be made from it.
      const tr = await request(api.app).post('/v1/transcripts').set(api.auth).send({ uploadId: id });
      expect(tr.status).toBe(404);
      expect(tr.body.error.code).toBe('upload_not_found');
    }
  });

  const lockHeld = async (id: string) =>
    (await api.redis.exists(`${api.deps.config.redisPrefix}:upload-lock:${id}`)) === 1;

  it('a status read during a chunk waits for it: a client that lost the response resumes at the right byte', async () => {
    // GET answered the length before the chunk still being written; a client that had lost that
    // chunk's response resent it from there, and the server appended it after the first copy:
    // receivedBytes reached expectedBytes with a range stored twice (the audio's words repeated).
    const id = await newUpload('?expectedBytes=3000');
    await putChunk(id, Buffer.alloc(1000, 'a')).expect(200);
    const inFlight = rawPut(id, { 'Content-Length': 1000 });
    inFlight.req.write(Buffer.alloc(500, 'b'));
    await waitFor(() => lockHeld(id), { message: 'the chunk holds the lock' });
    const status = request(api.app)
      .get(`/v1/uploads/${id}`)
      .set(api.auth)
      .then((r) => r);
    await new Promise((r) => setTimeout(r, 200));
    inFlight.req.end(Buffer.alloc(500, 'b'));
    expect((await inFlight.response).status).toBe(200);
    const read = await status;
    expect([read.status, read.body.data.receivedBytes]).toEqual([200, 2000]);
    await putChunk(id, Buffer.alloc(1000, 'c')).expect(200);
    const content = await readFile(storedFile(id));
    expect(
      content.equals(
        Buffer.concat([Buffer.alloc(1000, 'a'), Buffer.alloc(1000, 'b'), Buffer.alloc(1000, 'c')]),
      ),
    ).toBe(true);
  });

  it('a writer whose client goes silent is dropped: the lock is free within the lock TTL, nothing stored', async () => {
    // The lock used to be extended for as long as the request lived (Node's 300 s request
    // time-out) though no byte arrived: a network drop without FIN or RST blocked the upload
    // for 5 minutes. Here the TTL is 2 s, so the writer goes after 1.33 s without a byte.
    const id = await newUpload();
    await putChunk(id, Buffer.from('start:')).expect(200);
    const silent = rawPut(id, { 'Content-Length': 2 * MiB });
    silent.response.catch(() => undefined);
    silent.req.write(Buffer.alloc(MiB, 'z'));
    await waitFor(() => lockHeld(id), { message: 'the silent writer holds the lock' });
    const since = Date.now();
    await waitFor(async () => !(await lockHeld(id)), { timeout: 5000, message: 'lock released' });
    expect(Date.now() - since).toBeLessThan(2000);
    await putChunk(id, Buffer.from('end')).expect(200);
    expect((await readFile(storedFile(id))).toString()).toBe('start:end');
    silent.req.destroy();
  });

  describe('a create whose client goes silent is dropped as a chunk is', () => {
    // A silent POST held its Idempotency-Key's lock (and its bytes' reservation) for Node's 300 s
    // request time-out: every retry under the key waited 10 s and got 409 upload_busy, for 5
    // minutes. Here the TTL is 2 s, so the create goes after 1.33 s without a byte.
    const keyHeld = async (key: string) =>
      (await api.redis.exists(
        `${api.deps.config.redisPrefix}:upload-lock:key:${api.account.accountId}:${sha(Buffer.from(key))}`,
      )) === 1;
    const silentPost = async (key: string) => {
      const silent = rawRequest(port, 'POST', '/v1/uploads', {
        ...api.auth,
        'Idempotency-Key': key,
        'Content-Length': 2 * MiB,
      });
      silent.req.on('error', () => undefined);
      silent.response.catch(() => undefined);
      silent.req.write(Buffer.alloc(MiB, 'z'));
      await waitFor(() => keyHeld(key), { message: 'the silent create holds the key' });
      return silent;
    };
    const keyed = (key: string, body: Buffer) =>
      request(api.app).post('/v1/uploads').set(api.auth).set('Idempotency-Key', key).send(body);

    it('a first create: the key is free within the lock TTL, and its retry makes the upload', async () => {
      const key = `silent-first-${Date.now()}`;
      const silent = await silentPost(key);
      const since = Date.now();
      const retry = await keyed(key, Buffer.from('whole file')).expect(201);
      expect(Date.now() - since).toBeLessThan(3000);
      expect(retry.body.data.receivedBytes).toBe(10);
      expect((await readFile(storedFile(retry.body.data.id))).toString()).toBe('whole file');
      silent.req.destroy();
    });

    it('a replay: the key is free within the lock TTL, and the next replay answers the upload', async () => {
      const key = `silent-replay-${Date.now()}`;
      const first = await keyed(key, Buffer.from('whole file')).expect(201);
      const silent = await silentPost(key);
      const since = Date.now();
      const again = await keyed(key, Buffer.from('whole file')).expect(201);
      expect(Date.now() - since).toBeLessThan(3000);
      expect(again.body.data).toEqual(first.body.data);
      silent.req.destroy();
    });
  });

  it('a chunk still streaming when a transcript is made of the upload is refused and cut; the transcript keeps its length', async () => {
    // It used to be appended: 200 for bytes no transcript reads (the transcript had taken the
    // shorter length), and a row saying more than the audio transcribed.
    const id = await newUpload();
    await putChunk(id, Buffer.alloc(1000, 'a')).expect(200);
    const streaming = rawPut(id, { 'Content-Length': 1000 });
    streaming.req.write(Buffer.alloc(500, 'b'));
    await waitFor(() => lockHeld(id), { message: 'the chunk holds the lock' });
    await request(api.app).post('/v1/transcripts').set(api.auth).send({ uploadId: id }).expect(201);
    streaming.req.end(Buffer.alloc(500, 'b'));
    const late = await streaming.response;
    expect([late.status, JSON.parse(late.body).error.code, JSON.parse(late.body).error.retryable]).toEqual([
      409,
      'upload_busy',
      false,
    ]);
    const row = await api.db.upload.findUniqueOrThrow({ where: { id } });
    expect(row.receivedBytes).toBe(1000n);
    expect((await readFile(storedFile(id))).equals(Buffer.alloc(1000, 'a'))).toBe(true);
  });

  it('a client that drops mid-chunk leaves the upload consistent and resumable', async () => {
    const id = await newUpload();
    await putChunk(id, Buffer.from('start:')).expect(200);
    const dropped = rawPut(id, { 'Content-Length': 4 * MiB });
    dropped.req.on('error', () => undefined);
    dropped.response.catch(() => undefined);
    dropped.req.write(Buffer.alloc(MiB, 'z'));
    await waitFor(
      async () => (await api.redis.exists(`${api.deps.config.redisPrefix}:upload-lock:${id}`)) === 1,
    );
    dropped.req.destroy();
    // The writer notices, cuts the file back and frees the lock.
    await waitFor(
      async () => (await api.redis.exists(`${api.deps.config.redisPrefix}:upload-lock:${id}`)) === 0,
      {
        message: 'lock released after the drop',
      },
    );
    const state = await request(api.app).get(`/v1/uploads/${id}`).set(api.auth).expect(200);
    expect(state.body.data.receivedBytes).toBe(6);
    expect((await readFile(storedFile(id))).toString()).toBe('start:');
    await putChunk(id, Buffer.from('end')).expect(200);
    expect((await readFile(storedFile(id))).toString()).toBe('start:end');
  });
});
