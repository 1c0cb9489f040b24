import { randomBytes } from 'node:crypto';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { S3BlobStore, createS3Client } from '../src';

// The S3 driver's requests per append, counted by a middleware on the SDK client (one per HTTP
// attempt): an append lists nothing; it reads the remainder of the recorded offset, puts the
// parts it completes and its own remainder, and deletes the remainder the offset superseded.

const MiB = 1 << 20;
let s3: S3Client;
const sent: string[] = [];
beforeAll(() => {
  const endpoint = process.env.HARK_TEST_S3_ENDPOINT;
  if (!endpoint)
    throw new Error('HARK_TEST_S3_ENDPOINT is not set: run the tests through `bash scripts/test.sh`');
  s3 = createS3Client({ bucket: '', prefix: '', region: 'us-east-1', endpoint, forcePathStyle: true });
  s3.middlewareStack.add(
    (next, context) => async (args) => {
      sent.push((context.commandName ?? '?').replace(/Command$/, ''));
      return next(args);
    },
    { step: 'deserialize', name: 'countRequests' },
  );
});
afterAll(() => s3?.destroy());

it('an append lists nothing: per chunk, the remainder read, the parts, the new remainder, one delete', async () => {
  const bucket = `hark-requests-${randomBytes(6).toString('hex')}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  const store = new S3BlobStore(s3, bucket, 'uploads/');
  let offset = 0;
  let uploadId: string | null = null;
  const append = async (bytes: number) => {
    sent.length = 0;
    async function* body() {
      yield randomBytes(bytes);
    }
    const appended = await store.appendAt('r1', { offset, uploadId }, body(), {
      maxBytes: 64 * MiB,
      tooLarge: () => new Error('too large'),
      recordUploadId: async (id) => void (uploadId = id),
    });
    offset += appended.bytes;
    return [...sent].sort();
  };
  // The POST: a remainder only.
  expect(await append(3 * MiB)).toEqual(['PutObject']);
  // 3 -> 4 MiB: the remainder of 3 MiB read, the one of 4 MiB put (3 MiB extended none).
  expect(await append(MiB)).toEqual(['GetObject', 'PutObject']);
  // 4 -> 8 MiB: part 1 completed (the multipart upload starts), the remainder of 3 MiB deleted.
  expect(await append(4 * MiB)).toEqual([
    'CreateMultipartUpload',
    'DeleteObject',
    'GetObject',
    'PutObject',
    'UploadPart',
  ]);
  // 8 -> 10 MiB: part 2 completed, nothing left over.
  expect(await append(2 * MiB)).toEqual(['DeleteObject', 'GetObject', 'UploadPart']);
  // 10 -> 15 MiB, on part boundaries: the part alone.
  expect(await append(5 * MiB)).toEqual(['UploadPart']);
  // 15 -> 16 MiB: nothing read or stored but the remainder, so the blob is checked for a seal.
  expect(await append(MiB)).toEqual(['HeadObject', 'PutObject']);
  expect(offset).toBe(16 * MiB);
});
