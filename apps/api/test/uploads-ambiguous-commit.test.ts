import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { Db } from '@hark/db';
import { ChosenUploadHashing } from '@hark/storage';
import request from 'supertest';
import { UploadLock } from '../src/services/upload-lock';
import { UploadService } from '../src/services/upload.service';
import { apiTest } from './helpers';

// A chunk whose recording Postgres committed although the API saw the statement fail (the
// connection dropped on COMMIT): the bytes it stored are recorded, so nothing may drop them.
const api = apiTest({ account: { credits: 1000 } });

/** `db` whose next `upload.updateMany` that records a length fails after it has committed. */
function failingAfterCommit(db: Db): { db: Db; failNext(): void } {
  let fail = false;
  const bind = <T extends object>(t: T, p: string | symbol) => {
    const v = Reflect.get(t, p, t) as unknown;
    return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
  };
  const uploads = new Proxy(db.upload, {
    get(target, p) {
      if (p !== 'updateMany') return bind(target, p);
      return async (args: Parameters<Db['upload']['updateMany']>[0]) => {
        const done = await target.updateMany(args);
        if (fail && args.data.receivedBytes !== undefined) {
          fail = false;
          throw new Error('Connection terminated unexpectedly');
        }
        return done;
      };
    },
  });
  const wrapped = new Proxy(db, { get: (target, p) => (p === 'upload' ? uploads : bind(target, p)) });
  return { db: wrapped, failNext: () => (fail = true) };
}

describe('an append whose recording fails after Postgres committed it', () => {
  it('keeps the recorded bytes: the upload reports them and carries on, byte for byte', async () => {
    const { deps } = api;
    const faulty = failingAfterCommit(api.db);
    const hashing = new ChosenUploadHashing('thread');
    const uploads = new UploadService(
      faulty.db,
      deps.blobs,
      new UploadLock(deps.redis, deps.config.redisPrefix, 2000),
      hashing,
      { quotaBytes: deps.config.uploadQuotaBytes, noCreditBytes: deps.config.uploadNoCreditBytes },
    );
    try {
      const [a, b, c] = [randomBytes(70_000), randomBytes(50_000), randomBytes(30_000)];
      const created = await request(api.app)
        .post('/v1/uploads')
        .set(api.auth)
        .set('Content-Type', 'application/octet-stream')
        .send(a)
        .expect(201);
      const id = created.body.data.id as string;

      faulty.failNext();
      await expect(uploads.append(api.account.accountId, id, Readable.from([b]), b.length)).rejects.toThrow(
        'Connection terminated unexpectedly',
      );
      const after = await request(api.app).get(`/v1/uploads/${id}`).set(api.auth).expect(200);
      expect(after.body.data.receivedBytes).toBe(a.length + b.length);

      const next = await request(api.app)
        .put(`/v1/uploads/${id}`)
        .set(api.auth)
        .set('Content-Type', 'application/octet-stream')
        .send(c)
        .expect(200);
      expect(next.body.data.receivedBytes).toBe(a.length + b.length + c.length);
      const scratch = await mkdtemp(path.join(tmpdir(), 'hark-ambiguous-'));
      const dest = path.join(scratch, 'blob');
      await deps.blobs.fetchTo(id, a.length + b.length + c.length, dest);
      const stored = await readFile(dest);
      await rm(scratch, { recursive: true });
      expect(stored.equals(Buffer.concat([a, b, c]))).toBe(true);
    } finally {
      await hashing.close();
    }
  });
});
