import request from 'supertest';
import { type TestAccount, checkAccountInvariants } from '@hark/testing';
import { apiTest, envelope } from './helpers';

const api = apiTest();

/** POST /v1/transcripts with an Idempotency-Key. */
const createWithKey = (a: TestAccount, key: string, body: object) =>
  request(api.app).post('/v1/transcripts').set(a.auth).set('Idempotency-Key', key).send(body);

describe('Idempotency-Key on POST /v1/transcripts', () => {
  it('same key + same parsed body (JSON or form) returns the same transcript, one hold', async () => {
    const a = await api.newAccount({ toppedUp: true, credits: 100 });
    const first = await createWithKey(a, 'order-1', {
      url: 'https://e.com/a.wav',
      speakers: 2,
      metadata: { b: '2', a: '1' },
    }).expect(201);
    const again = await request(api.app)
      .post('/v1/transcripts')
      .set(a.auth)
      .set('Idempotency-Key', 'order-1')
      .type('form')
      .send('metadata%5Ba%5D=1&metadata%5Bb%5D=2&speakers=2&url=https%3A%2F%2Fe.com%2Fa.wav')
      .expect(201);
    expect(again.body.data.id).toBe(first.body.data.id);
    expect(await api.db.transcript.count({ where: { accountId: a.accountId } })).toBe(1);
    expect(await api.db.ledgerEntry.count({ where: { accountId: a.accountId, kind: 'reserve' } })).toBe(1);
  });

  it('same key + bodies that parse to the same fields (language case, speakers forms) replay', async () => {
    // "en" and "EN" are one language, `speakers: false` and no speakers the same: the
    // key compares parsed fields, not the raw ones (these used to be 409 idempotency_conflict).
    const a = await api.newAccount({ toppedUp: true, credits: 100 });
    const first = await createWithKey(a, 'same-1', { url: 'https://e.com/a.wav', language: 'en' }).expect(
      201,
    );
    const upper = await createWithKey(a, 'same-1', { url: 'https://e.com/a.wav', language: 'EN' }).expect(
      201,
    );
    expect(upper.body.data.id).toBe(first.body.data.id);
    const quiet = await createWithKey(a, 'same-2', { url: 'https://e.com/a.wav' }).expect(201);
    const noSpeakers = await createWithKey(a, 'same-2', { url: 'https://e.com/a.wav', speakers: false });
    expect([noSpeakers.status, noSpeakers.body.data?.id]).toEqual([201, quiet.body.data.id]);
    // Fields that differ once parsed still conflict.
    const other = await createWithKey(a, 'same-1', { url: 'https://e.com/a.wav', language: 'de' });
    expect(other.body).toEqual(envelope('idempotency_conflict', false));
    expect(await api.db.transcript.count({ where: { accountId: a.accountId } })).toBe(2);
  });

  it('same key + same body replays the transcript even after its upload was erased', async () => {
    // A retry must not depend on the upload still being usable: the key's transcript exists.
    const a = await api.newAccount({ toppedUp: true, credits: 100 });
    const up = await request(api.app)
      .post('/v1/uploads')
      .set(a.auth)
      .send(Buffer.from('RIFF....'))
      .expect(201);
    const uploadId = up.body.data.id as string;
    const first = await createWithKey(a, 'order-2', { uploadId }).expect(201);
    await api.db.upload.update({ where: { id: uploadId }, data: { erasedAt: new Date() } });
    const again = await createWithKey(a, 'order-2', { uploadId });
    expect(again.status).toBe(201);
    expect(again.body.data.id).toBe(first.body.data.id);
    // Without the key (or with a new one) the erased upload is still refused.
    const fresh = await createWithKey(a, 'order-3', { uploadId });
    expect(fresh.status).toBe(404);
    expect(fresh.body).toEqual(envelope('upload_not_found', false));
  });

  it('same key + same body after the transcript was deleted: 404 not_found, nothing created or held again', async () => {
    const a = await api.newAccount({ toppedUp: true, credits: 100 });
    const first = await createWithKey(a, 'order-del', { url: 'https://e.com/a.wav' }).expect(201);
    const id = first.body.data.id as string;
    await request(api.app).post(`/v1/transcripts/${id}/cancel`).set(a.auth).expect(200);
    await request(api.app).delete(`/v1/transcripts/${id}`).set(a.auth).expect(200);
    const again = await createWithKey(a, 'order-del', { url: 'https://e.com/a.wav' });
    expect(again.status).toBe(404);
    expect(again.body).toEqual(envelope('not_found', false));
    expect(await api.db.transcript.count({ where: { accountId: a.accountId } })).toBe(1);
    expect(await api.db.ledgerEntry.count({ where: { accountId: a.accountId, kind: 'reserve' } })).toBe(1);
    expect(await checkAccountInvariants(api.db, a.accountId)).toEqual([]);
  });

  it('deleting the transcript erases the fingerprint of its request; every create under the key is then 404', async () => {
    const a = await api.newAccount({ toppedUp: true, credits: 100 });
    const body = { url: 'https://e.com/a.wav?X-Amz-Signature=secret', metadata: { patient: 'x' } };
    const first = await createWithKey(a, 'order-erase', body).expect(201);
    const id = first.body.data.id as string;
    const record = () =>
      api.db.idempotencyRecord.findUniqueOrThrow({
        where: { accountId_key: { accountId: a.accountId, key: 'order-erase' } },
      });
    expect((await record()).requestHash).toMatch(/^[0-9a-f]{64}$/);
    await request(api.app).post(`/v1/transcripts/${id}/cancel`).set(a.auth).expect(200);
    await request(api.app).delete(`/v1/transcripts/${id}`).set(a.auth).expect(200);

    expect(await record()).toMatchObject({ transcriptId: id, requestHash: 'erased' });
    for (const replay of [body, { url: 'https://e.com/other.wav' }]) {
      const again = await createWithKey(a, 'order-erase', replay);
      expect([again.status, again.body]).toEqual([404, envelope('not_found', false)]);
    }
    expect(await api.db.transcript.count({ where: { accountId: a.accountId } })).toBe(1);
    expect(await checkAccountInvariants(api.db, a.accountId)).toEqual([]);
  });

  it('same key + different body: 409 idempotency_conflict; keys are per account', async () => {
    const a = await api.newAccount({ toppedUp: true });
    const b = await api.newAccount({ toppedUp: true });
    await createWithKey(a, 'k', { url: 'https://e.com/a.wav' }).expect(201);
    const res = await createWithKey(a, 'k', { url: 'https://e.com/b.wav' });
    expect(res.status).toBe(409);
    expect(res.body).toEqual(envelope('idempotency_conflict', false));
    await createWithKey(b, 'k', { url: 'https://e.com/b.wav' }).expect(201);
  });

  it('50 concurrent creates with one key: one transcript, one reservation', async () => {
    const a = await api.newAccount({ toppedUp: true, credits: 100 });
    const results = await Promise.all(
      Array.from({ length: 50 }, () => createWithKey(a, 'burst', { url: 'https://e.com/c.wav' })),
    );
    expect(new Set(results.map((r) => r.status))).toEqual(new Set([201]));
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
    expect(await api.db.transcript.count({ where: { accountId: a.accountId } })).toBe(1);
    expect(await api.db.ledgerEntry.count({ where: { accountId: a.accountId, kind: 'reserve' } })).toBe(1);
    expect(await checkAccountInvariants(api.db, a.accountId)).toEqual([]);
  });

  it('40 concurrent creates on one account, each with its own key: all accepted (no deadlock)', async () => {
    // The key's row references the account (a FOR KEY SHARE lock by the foreign key); the hold
    // then locks the account row. With FOR UPDATE there, two such transactions deadlock.
    const a = await api.newAccount({ toppedUp: true, credits: 1000 });
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => createWithKey(a, `own-${i}`, { url: 'https://e.com/d.wav' })),
    );
    expect(results.map((r) => r.status)).toEqual(Array.from({ length: 40 }, () => 201));
    expect(await api.db.transcript.count({ where: { accountId: a.accountId } })).toBe(40);
    expect(await checkAccountInvariants(api.db, a.accountId)).toEqual([]);
  });

  it('refusals store nothing under the key: validation, 402, key too long', async () => {
    const a = await api.newAccount({ credits: 0 });
    const bad = await createWithKey(a, 'x', { url: 'nope' });
    expect(bad.status).toBe(400);
    const broke = await createWithKey(a, 'x', { url: 'https://e.com/a.wav' });
    expect(broke.status).toBe(402);
    expect(await api.db.idempotencyRecord.count({ where: { accountId: a.accountId } })).toBe(0);
    const { grant } = await import('@hark/billing');
    await grant(api.db, a.accountId, 10);
    await createWithKey(a, 'x', { url: 'https://e.com/a.wav' }).expect(201);
    const long = await request(api.app)
      .post('/v1/transcripts')
      .set(a.auth)
      .set('Idempotency-Key', 'k'.repeat(65))
      .send({ url: 'https://e.com/a.wav', retentionDays: 0 });
    expect(long.body).toEqual(
      envelope('validation', false, {
        idempotencyKey: 'idempotency_key_invalid',
        retentionDays: 'retention_invalid',
      }),
    );
    await request(api.app)
      .post('/v1/transcripts')
      .set(a.auth)
      .set('Idempotency-Key', 'k'.repeat(64))
      .send({ url: 'https://e.com/a.wav' })
      .expect(201);
  });

  it('an expired key (24 h) is free again', async () => {
    const a = await api.newAccount({ toppedUp: true });
    const first = await createWithKey(a, 'old', { url: 'https://e.com/a.wav' }).expect(201);
    await api.db.idempotencyRecord.updateMany({
      where: { accountId: a.accountId },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const second = await createWithKey(a, 'old', { url: 'https://e.com/b.wav' }).expect(201);
    expect(second.body.data.id).not.toBe(first.body.data.id);
  });
});
