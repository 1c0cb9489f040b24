import { randomBytes } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { ListMultipartUploadsCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { newId } from '@hark/core';
import { createS3Client } from '@hark/storage';
import { s3TestBucket, waitFor } from '@hark/testing';
import { sweepRetention } from '../src/sweepers/retention.sweeper';
import { memorySweepCursor } from '../src/sweepers/sweep-cursor';
import { sweepOrphanBlobs } from '../src/sweepers/upload.sweeper';
import { testEnv, workerTest } from './worker-test-env';

// The worker with HARK_STORAGE=s3 against the S3Proxy the test command starts: it fetches
// uploads into its own scratch folder and removes them after the job; retention and the upload
// sweeper remove objects and multipart uploads.
let bucket: Awaited<ReturnType<typeof s3TestBucket>>;
const h = workerTest(async () => {
  bucket = await s3TestBucket();
  return bucket.env;
});

const s3 = () => createS3Client(bucket.settings);
async function openUploads(): Promise<string[]> {
  const client = s3();
  const page = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket.settings.bucket }));
  client.destroy();
  return (page.Uploads ?? []).map((u) => u.Key!);
}
const jfk = () => readFile(testEnv.jfkWav);

describe('worker on the S3 driver', () => {
  it('transcribes an upload fetched from the bucket into its scratch folder, which goes with the job', async () => {
    const acct = await h.account(1000);
    const uploadId = await h.upload(acct, await jfk());
    const id = await h.transcript(acct, { uploadId });
    await h.startWorker();
    await h.enqueue(id);
    const row = await waitFor(
      async () => {
        const t = await h.row(id);
        return t.status === 'processing' ? null : t;
      },
      { timeout: 60_000, message: 'the transcript to finish' },
    );
    expect(row).toMatchObject({ status: 'done', durationSeconds: 11 });
    // The scratch folder is removed just after the transcript is marked done.
    await waitFor(async () => (await readdir(h.config.tmpDir).catch(() => [])).length === 0, {
      timeout: 5000,
      message: "the worker's scratch folder to be emptied",
    });
  });

  it('retention erases the object with the transcript', async () => {
    const acct = await h.account(1000);
    const uploadId = await h.upload(acct, randomBytes(6 << 20));
    const id = await h.transcript(acct, { uploadId, expiresAt: new Date(Date.now() - 1000) });
    const content = { text: '', words: [], utterances: [], diarizationSegments: null };
    expect(await h.complete(id, content)).toBe(true);
    expect(await h.blobs.exists(uploadId)).toBe(true);
    await sweepRetention({ db: h.db, blobs: h.blobs });
    expect((await h.row(id)).deletedAt).not.toBeNull();
    expect(await h.blobs.exists(uploadId)).toBe(false);
    expect(await openUploads()).not.toContain(`uploads/${uploadId}`);
  });

  it('the upload sweeper aborts the multipart upload of a body whose row never came', async () => {
    const orphan = newId('up');
    async function* body() {
      yield randomBytes(6 << 20); // one part and a remainder
    }
    await h.blobs.appendAt(orphan, { offset: 0, uploadId: null }, body(), {
      maxBytes: 7 << 20,
      tooLarge: () => new Error('too large'),
    });
    expect(await openUploads()).toContain(`uploads/${orphan}`);
    // Only blobs written before `before` and named by no upload row are removed.
    const sweep = (before: Date) =>
      sweepOrphanBlobs({ db: h.db, blobs: h.blobs, before, cursor: memorySweepCursor() });
    expect(await sweep(new Date(Date.now() - 3600_000))).toBe(0);
    const acct = await h.account(1000);
    const kept = await h.upload(acct, randomBytes(6 << 20));
    expect(await sweep(new Date(Date.now() + 60_000))).toBe(1);
    expect(await openUploads()).not.toContain(`uploads/${orphan}`);
    expect(await h.blobs.exists(orphan)).toBe(false);
    expect(await h.blobs.exists(kept)).toBe(true);
  });

  it('the orphan sweep leaves alone every name under the prefix that Hark does not write', async () => {
    // It used to remove any id-like name with no upload row: another application's objects
    // beside the uploads, or another kind of id.
    const client = s3();
    const foreign = [
      'uploads/k1',
      `uploads/tr_${'a'.repeat(20)}`,
      'uploads/report.pdf',
      `other/${newId('up')}`,
    ];
    try {
      for (const Key of foreign)
        await client.send(new PutObjectCommand({ Bucket: bucket.settings.bucket, Key, Body: 'x' }));
      const orphan = newId('up');
      await h.blobs.appendAt(
        orphan,
        { offset: 0, uploadId: null },
        (async function* () {
          yield Buffer.from('orphan');
        })(),
        { maxBytes: 10, tooLarge: () => new Error('too large') },
      );
      await sweepOrphanBlobs({
        db: h.db,
        blobs: h.blobs,
        before: new Date(Date.now() + 60_000),
        cursor: memorySweepCursor(),
      });
      expect(await h.blobs.exists(orphan)).toBe(false);
      const left = await client.send(new ListObjectsV2Command({ Bucket: bucket.settings.bucket }));
      expect((left.Contents ?? []).map((o) => o.Key)).toEqual(expect.arrayContaining(foreign));
    } finally {
      client.destroy();
    }
  });
});
