import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { ListMultipartUploadsCommand, ListPartsCommand, type Part } from '@aws-sdk/client-s3';
import { createDb } from '@hark/db';
import { ResumableSha256, S3BlobStore, createS3Client } from '@hark/storage';
import { whileUploadLocked } from './helpers';
import { createTestAccount, s3TestBucket, startApiProcess, waitFor } from '@hark/testing';
import { scratchFolders } from '@hark/testing/jest';

// Scratch folders the tests make, removed once the file is done.
const scratch = scratchFolders();

// The S3 driver's version of uploads-crash.test.ts: the API dies after parts of a chunk are in
// the bucket but before Postgres records the chunk. The next replica must resume from the
// recorded offset, and the bytes sent then (different ones) must replace the dead chunk's parts.
const db = createDb({ databaseUrl: process.env.DATABASE_URL!, poolSize: 2 });
afterAll(() => db.$disconnect());
const MiB = 1 << 20;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

type UploadData = { id: string; receivedBytes: number };

describe('S3 uploads survive an API killed between a part and the database', () => {
  it('SIGKILL after parts were stored: resumes from the recorded offset, the new bytes replace the stale parts', async () => {
    const bucket = await s3TestBucket();
    const { settings } = bucket;
    const s3 = createS3Client(settings);
    const root = await scratch('hark-crash-s3-');
    const env = {
      PORT: '0',
      HARK_STORAGE_DIR: path.join(root, 'storage'),
      HARK_TMP_DIR: path.join(root, 'tmp'),
      HARK_UPLOAD_LOCK_TTL_MS: '2000',
      HARK_REDIS_PREFIX: `hark-crash-s3-${process.pid}`,
      ...bucket.env,
    };
    const acct = await createTestAccount(db, process.env.HARK_SECRET!);
    let api = await startApiProcess(env);
    expect(api.listening.storage).toMatch(/^s3 \(bucket hark-test-/);

    try {
      const head = randomBytes(300_000);
      const created = await api.call<UploadData>('POST', '/uploads', acct.auth, head);
      expect(created.status).toBe(201);
      const id = created.body.data.id;
      const name = `${settings.prefix}${id}`;
      const storedParts = async (): Promise<Part[]> => {
        const mpus = await s3.send(
          new ListMultipartUploadsCommand({ Bucket: settings.bucket, Prefix: name }),
        );
        const uploadId = (mpus.Uploads ?? []).find((u) => u.Key === name)?.UploadId;
        if (!uploadId) return [];
        return (
          (await s3.send(new ListPartsCommand({ Bucket: settings.bucket, Key: name, UploadId: uploadId })))
            .Parts ?? []
        );
      };
      // A head shorter than a part: nothing but the remainder object yet.
      expect(await storedParts()).toEqual([]);

      // A 12 MiB chunk (parts 1 and 2 whole, then a remainder): send 11 MiB of it, wait until
      // S3 holds both parts, then kill the API. The body is incomplete, so Postgres cannot have
      // recorded the chunk: the crash lands after the parts' PUTs and before the update.
      const req = http.request({
        host: '127.0.0.1',
        port: api.port,
        method: 'PUT',
        path: `/v1/uploads/${id}`,
        headers: { ...acct.auth, 'Content-Length': 12 * MiB },
      });
      req.on('error', () => undefined);
      req.write(randomBytes(11 * MiB));
      const stale = await waitFor(
        async () => {
          const parts = await storedParts();
          return parts.length >= 2 ? parts : null;
        },
        { timeout: 30_000, interval: 100, message: 'the dead chunk’s parts 1 and 2 in S3' },
      );
      expect(stale.map((p) => [p.PartNumber, p.Size])).toEqual([
        [1, 5 * MiB],
        [2, 5 * MiB],
      ]);
      api.proc.kill('SIGKILL');
      await api.proc.exited;
      req.destroy();

      api = await startApiProcess(env);
      const after = await api.call<UploadData>('GET', `/uploads/${id}`, acct.auth);
      expect(after.body.data.receivedBytes).toBe(head.length);
      // The stale parts are still there: the new replica must not trust them.
      expect((await storedParts()).map((p) => p.ETag)).toEqual(stale.map((p) => p.ETag));

      // Different bytes in chunks that cross both part boundaries (each part is re-sent, from a
      // remainder plus the chunk), ending off a boundary.
      const [firstChunk, ...moreChunks] = [6 * MiB, 4 * MiB + 123, 2 * MiB].map((n) => randomBytes(n));
      const chunks = [firstChunk!, ...moreChunks];
      // The dead writer's lock expires first (TTL 2 s here, 30 s by default).
      const first = await whileUploadLocked(
        () => api.call<UploadData>('PUT', `/uploads/${id}`, acct.auth, firstChunk),
        10_000,
      );
      let offset = first.body.data.receivedBytes;
      expect(offset).toBe(head.length + firstChunk!.length);
      for (const chunk of moreChunks) {
        const r = await api.call<UploadData>('PUT', `/uploads/${id}`, acct.auth, chunk);
        expect(r.status).toBe(200);
        expect(r.body.data.receivedBytes).toBe(offset + chunk.length);
        offset = r.body.data.receivedBytes;
      }
      const expected = Buffer.concat([head, ...chunks]);
      expect((await api.call<UploadData>('GET', `/uploads/${id}`, acct.auth)).body.data.receivedBytes).toBe(
        expected.length,
      );
      // Both parts were overwritten with the new bytes.
      const now = await storedParts();
      expect(now.map((p) => p.PartNumber)).toEqual([1, 2]);
      now.forEach((p, i) => expect(p.ETag).not.toBe(stale[i]?.ETag));

      // What a worker would read: the driver seals the blob and streams the recorded bytes.
      const store = new S3BlobStore(s3, settings.bucket, settings.prefix);
      const dest = path.join(root, 'fetched');
      await store.fetchTo(id, expected.length, dest);
      const fetched = await readFile(dest);
      expect(fetched.length).toBe(expected.length);
      expect(sha(fetched)).toBe(sha(expected));
      const row = await db.upload.findUniqueOrThrow({ where: { id } });
      expect(Number(row.receivedBytes)).toBe(expected.length);
      expect(await (await ResumableSha256.start(row.hashState)).digestHex()).toBe(sha(expected));
    } finally {
      api.proc.kill('SIGTERM');
      await api.proc.exited;
      s3.destroy();
    }
  });
});
