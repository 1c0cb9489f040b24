import { randomBytes } from 'node:crypto';
import { createProcessingTranscript, silentS3Store } from '@hark/testing';
import { failTranscript } from '@hark/transcripts';
import { apiTest as apiFixture } from '@hark/testing/jest';
import request from 'supertest';
import { envelope, rawRequest, startTestApi } from './helpers';

// Issue 36, item 2: the object store accepts connections and never answers. Before the S3
// client had time-outs, an append there hung for ever while its upload lock was extended every
// 10 s: every later PUT or GET of the upload answered 409 upload_busy until the API restarted,
// and its bytes stayed reserved against the account's quota. Now the call fails within the
// client's time-outs as 503 `unavailable` (retryable), and the lock and reservation go with it;
// a client that leaves meanwhile ends the store's calls at once.

let store: Awaited<ReturnType<typeof silentS3Store>>;
const api = apiFixture({
  start: async () => {
    store = await silentS3Store(300);
    const started = startTestApi({ storage: { driver: 's3', ...store.settings } });
    return {
      ...started,
      async close() {
        await started.close();
        await store.close();
      },
    };
  },
  account: { credits: 100 },
});

const inflight = async (accountId: string) =>
  api.redis.hgetall(`${api.deps.config.redisPrefix}:upload-inflight:${accountId}`);

/** An upload created with an empty body: no store call until its first chunk. */
async function emptyUpload(): Promise<string> {
  const res = await request(api.app).post('/v1/uploads').set(api.auth).expect(201);
  return res.body.data.id as string;
}

describe('a store that never answers', () => {
  it('a chunk fails 503 unavailable (retryable) within the time-outs; the upload is free again at once, nothing reserved', async () => {
    const id = await emptyUpload();
    const t0 = Date.now();
    const res = await request(api.app).put(`/v1/uploads/${id}`).set(api.auth).send(randomBytes(1000));
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect([res.status, res.body]).toEqual([503, envelope('unavailable', true)]);
    // Not 409 upload_busy: the lock went with the failed append.
    const got = await request(api.app).get(`/v1/uploads/${id}`).set(api.auth);
    expect([got.status, got.body.data?.receivedBytes]).toEqual([200, 0]);
    expect(await inflight(api.account.accountId)).toEqual({});
    // And the next chunk is tried, not refused busy.
    const again = await request(api.app).put(`/v1/uploads/${id}`).set(api.auth).send(randomBytes(10));
    expect([again.status, again.body.error?.code]).toEqual([503, 'unavailable']);
  });

  it('a create with a body fails the same way and reserves nothing after', async () => {
    const res = await request(api.app).post('/v1/uploads').set(api.auth).send(randomBytes(1000));
    expect([res.status, res.body]).toEqual([503, envelope('unavailable', true)]);
    expect(await inflight(api.account.accountId)).toEqual({});
    expect(
      await api.db.upload.count({ where: { accountId: api.account.accountId, receivedBytes: 1000 } }),
    ).toBe(0);
  });

  it('a transcript deletion answers within the time-outs; the erased bytes are left to the upload sweeper', async () => {
    const uploadId = await emptyUpload();
    await api.db.upload.update({ where: { id: uploadId }, data: { receivedBytes: 1000n } });
    const id = await createProcessingTranscript(api.db, api.account, { uploadId });
    expect(await failTranscript(api.db, id, 'audio_invalid', 'The audio could not be decoded.')).toBe(true);
    const t0 = Date.now();
    const res = await request(api.app).delete(`/v1/transcripts/${id}`).set(api.auth);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect([res.status, res.body.data]).toEqual([200, { id, deleted: true }]);
    const upload = await api.db.upload.findUniqueOrThrow({ where: { id: uploadId } });
    expect([upload.erasedAt !== null, upload.blobsRemovedAt]).toEqual([true, null]);
  });

  it('a client that leaves while the store hangs ends the append at once, not after the time-outs', async () => {
    // Time-outs of a minute (three attempts: three minutes): only the abort can free it soon.
    const slow = await silentS3Store(60_000);
    const app = startTestApi({ storage: { driver: 's3', ...slow.settings } });
    try {
      const acct = await api.newAccount({ credits: 100 });
      const created = await request(app.app).post('/v1/uploads').set(acct.auth).expect(201);
      const id = created.body.data.id as string;
      const port = await app.listen();
      const { req, response } = rawRequest(port, 'PUT', `/v1/uploads/${id}`, {
        ...acct.auth,
        'Content-Length': 100,
      });
      response.catch(() => undefined); // it never comes: the client leaves
      req.end(randomBytes(100));
      // The body is in, the remainder's PUT waits on the silent store: the client gives up.
      const lockKey = `${app.deps.config.redisPrefix}:upload-lock:${id}`;
      const t0 = Date.now();
      while (slow.connections === 0 && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 20));
      expect(await app.redis.exists(lockKey)).toBe(1);
      req.destroy();
      const left = Date.now();
      while ((await app.redis.exists(lockKey)) === 1 && Date.now() - left < 10_000)
        await new Promise((r) => setTimeout(r, 50));
      expect(Date.now() - left).toBeLessThan(3000);
      const got = await request(app.app).get(`/v1/uploads/${id}`).set(acct.auth);
      expect([got.status, got.body.data?.receivedBytes]).toEqual([200, 0]);
      expect(
        await app.redis.hgetall(`${app.deps.config.redisPrefix}:upload-inflight:${acct.accountId}`),
      ).toEqual({});
    } finally {
      await app.close();
      await slow.close();
    }
  });
});
