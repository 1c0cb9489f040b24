import { stat } from 'node:fs/promises';
import path from 'node:path';
import { grant } from '@hark/billing';
import { type TestAccount, waitFor } from '@hark/testing';
import { failTranscript } from '@hark/transcripts';
import request from 'supertest';
import { apiTest, envelope, rawRequest } from './helpers';

// Issue 15, item 4: storage without credit. Small caps so the tests move little data.
const MiB = 1024 * 1024;
const QUOTA = 8 * MiB;
const NO_CREDIT = 1 * MiB;

const api = apiTest({ config: { uploadQuotaBytes: QUOTA, uploadNoCreditBytes: NO_CREDIT } });
let port: number;
beforeAll(async () => {
  port = await api.listen();
});

const account = (credits: number) => api.newAccount({ credits });
const fileSize = async (id: string) => (await stat(path.join(api.deps.config.storageDir, id))).size;
const received = async (acct: TestAccount, id: string) =>
  (await request(api.app).get(`/v1/uploads/${id}`).set(acct.auth).expect(200)).body.data
    .receivedBytes as number;

function newUpload(acct: TestAccount, query = '', body?: Buffer) {
  const req = request(api.app).post(`/v1/uploads${query}`).set(acct.auth);
  return body ? req.send(body) : req;
}

const put = (acct: TestAccount, id: string, body: Buffer) =>
  request(api.app).put(`/v1/uploads/${id}`).set(acct.auth).send(body);

/** A PUT whose body we send in pieces (supertest sends whole bodies). */
const rawPut = (acct: TestAccount, id: string, headers: Record<string, string | number>) =>
  rawRequest(port, 'PUT', `/v1/uploads/${id}`, { ...acct.auth, ...headers });

describe('upload quota', () => {
  it('an account without credit is refused 402 insufficient_balance past the no-credit allowance; refused bytes are not stored', async () => {
    const acct = await account(0);
    // Within the allowance: a body, then a chunk.
    const first = await newUpload(acct, '', Buffer.alloc(600 * 1024, 1)).expect(201);
    const id = first.body.data.id as string;
    await put(acct, id, Buffer.alloc(300 * 1024, 2)).expect(200);
    expect(await received(acct, id)).toBe(900 * 1024);

    // Past it: a second body, a declared size, a chunk (declared and streamed).
    const body = await newUpload(acct, '', Buffer.alloc(600 * 1024, 3)).expect(402);
    expect(body.body).toEqual(envelope('insufficient_balance', false));
    expect(body.headers.connection).toBe('close');
    const declared = await newUpload(acct, `?expectedBytes=${2 * 1024 ** 3}`).expect(402);
    expect(declared.body).toEqual(envelope('insufficient_balance', false));
    const chunk = await put(acct, id, Buffer.alloc(200 * 1024, 4)).expect(402);
    expect(chunk.body).toEqual(envelope('insufficient_balance', false));
    const streamed = rawPut(acct, id, { 'Transfer-Encoding': 'chunked' });
    for (let i = 0; i < 4; i++) streamed.req.write(Buffer.alloc(64 * 1024, 5));
    streamed.req.end();
    const res = await streamed.response;
    expect(res.status).toBe(402);
    expect(JSON.parse(res.body)).toEqual(envelope('insufficient_balance', false));

    // A flood of small uploads stops at the allowance too.
    const flood = [];
    for (let i = 0; i < 8; i++) flood.push((await newUpload(acct, '', Buffer.alloc(64 * 1024, 6))).status);
    expect(flood.filter((s) => s === 201)).toHaveLength(1); // 900 KiB + 64 KiB fits, + 128 KiB does not
    expect(flood.filter((s) => s === 402)).toHaveLength(7);

    // Nothing of the refused requests was kept.
    expect(await received(acct, id)).toBe(900 * 1024);
    expect(await fileSize(id)).toBe(900 * 1024);
    expect(await api.db.upload.count({ where: { accountId: acct.accountId } })).toBe(2);
    const limits = await request(api.app).get('/v1/limits').set(acct.auth).expect(200);
    expect(limits.body.data.upload.quotaBytes).toBe(NO_CREDIT);

    // Credits lift the allowance to the quota.
    await grant(api.db, acct.accountId, 10);
    await put(acct, id, Buffer.alloc(200 * 1024, 4)).expect(200);
    expect(
      (await request(api.app).get('/v1/limits').set(acct.auth).expect(200)).body.data.upload.quotaBytes,
    ).toBe(QUOTA);
  });

  it('a credited account past its quota gets 413 upload_quota_exceeded; declared sizes count from creation, used uploads stop counting', async () => {
    const acct = await account(1000);
    const big = (await newUpload(acct, `?expectedBytes=${6 * MiB}`).expect(201)).body.data.id as string;
    const over = await newUpload(acct, `?expectedBytes=${3 * MiB}`).expect(413);
    expect(over.body).toEqual(envelope('upload_quota_exceeded', false));
    expect(over.body.error.message).toContain(String(QUOTA));
    const small = (await newUpload(acct, `?expectedBytes=${2 * MiB}`, Buffer.alloc(MiB, 1)).expect(201)).body
      .data.id as string;
    // Held now: 6 + 2 MiB declared. Chunks within a declared size add nothing and pass.
    await put(acct, big, Buffer.alloc(4 * MiB, 2)).expect(200);
    await put(acct, small, Buffer.alloc(MiB, 3)).expect(200);
    // An undeclared upload may be created (it holds nothing) but not filled.
    const loose = (await newUpload(acct).expect(201)).body.data.id as string;
    const refused = await put(acct, loose, Buffer.alloc(10, 4)).expect(413);
    expect(refused.body).toEqual(envelope('upload_quota_exceeded', false));
    expect(refused.headers.connection).toBe('close');
    // Growing past a declared size counts (the upload would then not be transcribable, but the
    // bytes are stored until it expires).
    expect((await put(acct, big, Buffer.alloc(2 * MiB + 1, 5)).expect(413)).body).toEqual(
      envelope('upload_quota_exceeded', false),
    );
    expect(await received(acct, loose)).toBe(0);
    expect(await fileSize(loose)).toBe(0);
    expect(await received(acct, big)).toBe(4 * MiB);
    expect(await fileSize(big)).toBe(4 * MiB);

    // Once a transcript uses an upload, it no longer counts against the quota.
    await request(api.app).post('/v1/transcripts').set(acct.auth).send({ uploadId: small }).expect(201);
    expect((await api.db.upload.findUniqueOrThrow({ where: { id: small } })).usedAt).not.toBeNull();
    await put(acct, loose, Buffer.alloc(MiB, 6)).expect(200);
    const limits = await request(api.app).get('/v1/limits').set(acct.auth).expect(200);
    expect(limits.body.data.upload.quotaBytes).toBe(QUOTA);
  });

  it('an upload whose transcript failed counts again: a failing transcript is no way around the quota', async () => {
    // A 2 GiB file with a wrong sha256 fails at once (audio_mismatch, nothing charged); its upload
    // used to stop counting for good, so the account could store any number of them.
    const acct = await account(1000);
    const parked = (await newUpload(acct, '', Buffer.alloc(6 * MiB, 1)).expect(201)).body.data.id as string;
    const tr = await request(api.app)
      .post('/v1/transcripts')
      .set(acct.auth)
      .send({ uploadId: parked })
      .expect(201);
    const next = (await newUpload(acct, '', Buffer.alloc(6 * MiB, 2)).expect(201)).body.data.id as string;
    await request(api.app).post('/v1/transcripts').set(acct.auth).send({ uploadId: next }).expect(201);
    expect(await failTranscript(api.db, tr.body.data.id as string, 'audio_mismatch', 'mismatch')).toBe(true);
    const refused = await newUpload(acct, '', Buffer.alloc(3 * MiB, 3)).expect(413);
    expect(refused.body).toEqual(envelope('upload_quota_exceeded', false));
    // It is unused again, so it can also be transcribed again (it expires with the unused ones).
    await request(api.app).post('/v1/transcripts').set(acct.auth).send({ uploadId: parked }).expect(201);
    await newUpload(acct, '', Buffer.alloc(3 * MiB, 3)).expect(201);
  });

  it('concurrent chunks to different uploads of one account never pass the quota together', async () => {
    const acct = await account(1000);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) ids.push((await newUpload(acct).expect(201)).body.data.id as string);
    // Six 2 MiB chunks at once (12 MiB) against an 8 MiB quota: each request sends half its
    // body and waits, so every one has passed its quota check before any has been recorded.
    const chunk = Buffer.alloc(2 * MiB, 7);
    const puts = ids.map((id) => rawPut(acct, id, { 'Content-Length': chunk.length }));
    const answered = new Set<number>();
    puts.forEach((p, i) => {
      p.req.write(chunk.subarray(0, MiB));
      void p.response.then(() => answered.add(i)).catch(() => answered.add(i));
    });
    const lockKey = (id: string) => `${api.deps.config.redisPrefix}:upload-lock:${id}`;
    await waitFor(
      async () => {
        const locked = await Promise.all(ids.map(async (id) => (await api.redis.exists(lockKey(id))) === 1));
        return locked.filter((l, i) => l && !answered.has(i)).length + answered.size === ids.length;
      },
      { message: 'every chunk writing or refused' },
    );
    for (const p of puts) if (!p.req.destroyed) p.req.end(chunk.subarray(MiB));
    const results = await Promise.all(puts.map((p) => p.response.catch(() => ({ status: 0, body: '' }))));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 413, 413]);
    for (const r of results.filter((x) => x.status === 413)) {
      expect(JSON.parse(r.body)).toEqual(envelope('upload_quota_exceeded', false));
    }
    const sizes = await Promise.all(ids.map((id) => received(acct, id)));
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(QUOTA);
    for (const [i, id] of ids.entries()) expect(await fileSize(id)).toBe(sizes[i]);
    // Every reservation was released with its lock.
    expect(await api.redis.hlen(`${api.deps.config.redisPrefix}:upload-inflight:${acct.accountId}`)).toBe(0);
  });
});
