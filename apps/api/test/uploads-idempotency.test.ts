import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { TestAccount } from '@hark/testing';
import request from 'supertest';
import { KeyTaken, claimUploadKey } from '../src/services/upload-idempotency';
import { apiTest, envelope } from './helpers';

// A client that lost the answer to POST /v1/uploads and sent it again used to get a second
// upload, the first left unused and holding its declared size of the account's quota for a day:
// two lost answers to a 3 GiB create and the third try was refused upload_quota_exceeded.
const MiB = 1024 * 1024;
const QUOTA = 8 * MiB;
const api = apiTest({ config: { uploadQuotaBytes: QUOTA, uploadNoCreditBytes: QUOTA } });

const create = (a: TestAccount, key: string | null, query = '', body?: Buffer) => {
  const req = request(api.app).post(`/v1/uploads${query}`).set(a.auth);
  if (key !== null) req.set('Idempotency-Key', key);
  return body ? req.send(body) : req;
};
const uploadsOf = (a: TestAccount) => api.db.upload.count({ where: { accountId: a.accountId } });
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('Idempotency-Key on POST /v1/uploads', () => {
  it('same key, same query: the same upload, made once, even when its declared size fills the quota', async () => {
    const a = await api.newAccount({ credits: 10 });
    const digest = 'a'.repeat(64);
    const query = `?expectedBytes=${6 * MiB}&sha256=${digest}`;
    const first = await create(a, 'file-1', query).expect(201);
    // Without the key this second create is refused: 6 MiB held plus 6 MiB declared pass 8 MiB.
    await create(a, null, query).expect(413);
    const again = await create(a, 'file-1', query).expect(201);
    expect(again.body.data).toEqual(first.body.data);
    expect(again.headers['cache-control']).toBe('no-store');
    expect(await uploadsOf(a)).toBe(1);
  });

  it('a replay answers the upload as it stands now, after chunks were appended', async () => {
    const a = await api.newAccount({ credits: 10 });
    const first = await create(a, 'file-2', '?expectedBytes=10').expect(201);
    const id = first.body.data.id as string;
    await request(api.app).put(`/v1/uploads/${id}`).set(a.auth).send(Buffer.from('12345')).expect(200);
    const again = await create(a, 'file-2', '?expectedBytes=10').expect(201);
    expect(again.body.data).toMatchObject({ id, receivedBytes: 5, expectedBytes: 10 });
  });

  it('same key, other query (size or digest, the digest compared lowercase): 409 idempotency_conflict', async () => {
    const a = await api.newAccount({ credits: 10 });
    const digest = 'ab'.repeat(32);
    const first = await create(a, 'file-3', `?expectedBytes=100&sha256=${digest}`).expect(201);
    const upper = await create(a, 'file-3', `?expectedBytes=100&sha256=${digest.toUpperCase()}`).expect(201);
    expect(upper.body.data.id).toBe(first.body.data.id);
    for (const query of ['?expectedBytes=101', `?expectedBytes=100`, `?sha256=${digest}`, '']) {
      const res = await create(a, 'file-3', query).expect(409);
      expect(res.body).toEqual(envelope('idempotency_conflict', false));
    }
    expect(await uploadsOf(a)).toBe(1);
  });

  it('with a body: the same bytes replay without storing them twice, other bytes conflict', async () => {
    const a = await api.newAccount({ credits: 10 });
    const body = Buffer.alloc(2 * MiB, 7);
    const first = await create(a, 'file-4', '', body).expect(201);
    const id = first.body.data.id as string;
    const again = await create(a, 'file-4', '', body).expect(201);
    expect(again.body.data).toEqual(first.body.data);
    const other = Buffer.from(body);
    other[other.length - 1] = 8;
    expect((await create(a, 'file-4', '', other).expect(409)).body).toEqual(
      envelope('idempotency_conflict', false),
    );
    // A shorter body or none at all is another request too.
    await create(a, 'file-4', '', body.subarray(0, MiB)).expect(409);
    await create(a, 'file-4').expect(409);
    expect(await uploadsOf(a)).toBe(1);
    // The stored file is the first body, whole: the replays appended nothing.
    expect(sha(await readFile(path.join(api.deps.config.storageDir, id)))).toBe(sha(body));
  });

  it('creates with one key at once give one upload, none refused by the others in flight, no file left behind', async () => {
    // Each declares just over a quarter of the quota: were the four to run side by side, the
    // fourth would be refused 413 by the others' reservations (a retry overlapping its first
    // try, refused, while the first then made its upload).
    const a = await api.newAccount({ credits: 10 });
    const body = Buffer.alloc(MiB, 3);
    const answers = await Promise.all(
      [1, 2, 3, 4].map(() => create(a, 'race-1', `?expectedBytes=${2 * MiB + 1}`, body)),
    );
    expect(answers.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(answers.map((r) => r.body.data.id)).size).toBe(1);
    expect(await uploadsOf(a)).toBe(1);
    // Only the winner's blob is left in the store (the losers' were written, then removed).
    const files = (await readdir(api.deps.config.storageDir)).filter((f) => f.startsWith('up_'));
    const mine = await api.db.upload.findMany({ where: { accountId: a.accountId }, select: { id: true } });
    const others = await api.db.upload.findMany({
      where: { accountId: { not: a.accountId } },
      select: { id: true },
    });
    const known = new Set([...mine, ...others].map((u) => u.id));
    expect(files.filter((f) => !known.has(f))).toEqual([]);
  });

  it('keys are per account, and apart from the keys of POST /v1/transcripts', async () => {
    const a = await api.newAccount({ credits: 10 });
    const b = await api.newAccount({ credits: 10 });
    const mine = await create(a, 'shared-key', '?expectedBytes=4').expect(201);
    const theirs = await create(b, 'shared-key', '?expectedBytes=4').expect(201);
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);
    // The same key names the upload and the transcript made of it.
    const uploadId = mine.body.data.id as string;
    await request(api.app).put(`/v1/uploads/${uploadId}`).set(a.auth).send(Buffer.from('RIFF')).expect(200);
    await request(api.app)
      .post('/v1/transcripts')
      .set(a.auth)
      .set('Idempotency-Key', 'shared-key')
      .send({ uploadId })
      .expect(201);
  });

  it('a key past its 24 hours makes a new upload', async () => {
    const a = await api.newAccount({ credits: 10 });
    const first = await create(a, 'old-1', '?expectedBytes=4').expect(201);
    await api.db.uploadIdempotencyRecord.update({
      where: { accountId_key: { accountId: a.accountId, key: 'old-1' } },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const fresh = await create(a, 'old-1', '?expectedBytes=8').expect(201);
    expect(fresh.body.data.id).not.toBe(first.body.data.id);
    const again = await create(a, 'old-1', '?expectedBytes=8').expect(201);
    expect(again.body.data.id).toBe(fresh.body.data.id);
  });

  it('a replay of an upload that is gone (erased) is 404 upload_not_found, not a new upload', async () => {
    const a = await api.newAccount({ credits: 10 });
    const first = await create(a, 'gone-1', '?expectedBytes=4').expect(201);
    await api.db.upload.update({ where: { id: first.body.data.id }, data: { erasedAt: new Date() } });
    const res = await create(a, 'gone-1', '?expectedBytes=4').expect(404);
    expect(res.body).toEqual(envelope('upload_not_found', false));
    expect(await uploadsOf(a)).toBe(1);
  });

  it('erasing the upload (its transcript deleted) erases the fingerprint of its bytes; every replay under the key is still 404', async () => {
    const a = await api.newAccount({ toppedUp: true, credits: 10 });
    const body = Buffer.from('RIFF-some-audio-bytes');
    const first = await create(a, 'erase-1', '', body).expect(201);
    const uploadId = first.body.data.id as string;
    const record = () =>
      api.db.uploadIdempotencyRecord.findUniqueOrThrow({
        where: { accountId_key: { accountId: a.accountId, key: 'erase-1' } },
      });
    const hashed = (await record()).requestHash;
    expect(hashed).toMatch(/^[0-9a-f]{64}$/);
    const t = await request(api.app).post('/v1/transcripts').set(a.auth).send({ uploadId }).expect(201);
    await request(api.app).post(`/v1/transcripts/${t.body.data.id}/cancel`).set(a.auth).expect(200);
    await request(api.app).delete(`/v1/transcripts/${t.body.data.id}`).set(a.auth).expect(200);
    expect((await api.db.upload.findUniqueOrThrow({ where: { id: uploadId } })).erasedAt).not.toBeNull();

    // Nothing left that a copy of the file could be matched against; the key stays claimed.
    expect(await record()).toMatchObject({ uploadId, requestHash: 'erased' });
    for (const replay of [body, Buffer.from('other bytes')]) {
      const res = await create(a, 'erase-1', '', replay).expect(404);
      expect(res.body).toEqual(envelope('upload_not_found', false));
    }
    expect(await uploadsOf(a)).toBe(1);
  });

  it('however the upload is erased (any code path), the database forgets its fingerprint', async () => {
    const a = await api.newAccount({ credits: 10 });
    await create(a, 'erase-2', '?expectedBytes=4').expect(201);
    const { uploadId } = await api.db.uploadIdempotencyRecord.findUniqueOrThrow({
      where: { accountId_key: { accountId: a.accountId, key: 'erase-2' } },
    });
    // By any code path (here the sweeper's kind of update): the database forgets it.
    await api.db.upload.update({ where: { id: uploadId }, data: { erasedAt: new Date() } });
    const { requestHash } = await api.db.uploadIdempotencyRecord.findUniqueOrThrow({
      where: { accountId_key: { accountId: a.accountId, key: 'erase-2' } },
    });
    expect(requestHash).toBe('erased');
  });

  it('an invalid key is 400 validation naming idempotencyKey, and nothing is stored', async () => {
    const a = await api.newAccount({ credits: 10 });
    const res = await create(a, 'k'.repeat(65), '?expectedBytes=4').expect(400);
    expect(res.body).toEqual(envelope('validation', false, { idempotencyKey: 'idempotency_key_invalid' }));
    const both = await create(a, 'k'.repeat(65), '?expectedBytes=0').expect(400);
    expect(both.body.error.fields).toEqual({
      idempotencyKey: 'idempotency_key_invalid',
      expectedBytes: 'expected_bytes_invalid',
    });
    expect(await uploadsOf(a)).toBe(0);
  });

  it('a refused first create (over the quota) claims no key: the retry with room succeeds', async () => {
    const a = await api.newAccount({ credits: 10 });
    const big = await create(a, 'fill', `?expectedBytes=${7 * MiB}`).expect(201);
    await create(a, 'later', `?expectedBytes=${2 * MiB}`).expect(413);
    await api.db.upload.update({ where: { id: big.body.data.id }, data: { erasedAt: new Date() } });
    const ok = await create(a, 'later', `?expectedBytes=${2 * MiB}`).expect(201);
    expect(ok.body.data.expectedBytes).toBe(2 * MiB);
  });

  it('claimUploadKey: a second transaction claiming the key waits for the first, then gets its record and rolls back', async () => {
    const a = await api.newAccount({ credits: 10 });
    const ids = [`up_txrace_a_${Date.now()}`, `up_txrace_b_${Date.now()}`] as const;
    let release!: () => void;
    const hold = new Promise<void>((r) => (release = r));
    let claimed!: () => void;
    const firstClaimed = new Promise<void>((r) => (claimed = r));
    const first = api.db.$transaction(
      async (tx) => {
        await tx.upload.create({ data: { id: ids[0], accountId: a.accountId } });
        await claimUploadKey(tx, a.accountId, 'tx-race', 'h1', ids[0]);
        claimed();
        await hold;
      },
      { timeout: 20_000 },
    );
    await firstClaimed;
    let settled = false;
    const second = api.db
      .$transaction(async (tx) => {
        await tx.upload.create({ data: { id: ids[1], accountId: a.accountId } });
        await claimUploadKey(tx, a.accountId, 'tx-race', 'h2', ids[1]);
      })
      .then(
        () => null,
        (e: unknown) => e,
      )
      .finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(settled).toBe(false); // blocked on the primary key while the first is open
    release();
    await first;
    const err = await second;
    expect(err).toBeInstanceOf(KeyTaken);
    expect(err).toMatchObject({ prior: { requestHash: 'h1', uploadId: ids[0] }, hash: 'h2' });
    expect(await api.db.upload.count({ where: { id: { in: [...ids] } } })).toBe(1);
  });
});
