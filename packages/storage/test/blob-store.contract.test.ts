import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  CreateBucketCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import {
  type AppendOptions,
  BlobMissingError,
  BlobSealedError,
  type BlobStore,
  BlobStoreUnavailableError,
  LocalBlobStore,
  S3_PART_BYTES,
  S3BlobStore,
  createS3Client,
} from '../src';

// The storage contract: every driver behaves the same for the API and the workers. The S3
// driver runs against the S3Proxy the test command starts (scripts/lib.sh `start_s3proxy`).

async function* chunks(...parts: (Buffer | Error)[]): AsyncIterable<Buffer> {
  for (const p of parts) {
    if (p instanceof Error) throw p;
    yield p;
  }
}
const tooLarge = () => new Error('too large');
const opts = (maxBytes = 64 << 20) => ({ maxBytes, tooLarge });
const MiB = 1 << 20;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), 'hark-contract-'));
});
afterAll(() => rm(scratch, { recursive: true, force: true }));

let s3: S3Client;
async function s3Store(): Promise<{ store: S3BlobStore; bucket: string }> {
  const endpoint = process.env.HARK_TEST_S3_ENDPOINT;
  if (!endpoint)
    throw new Error('HARK_TEST_S3_ENDPOINT is not set: run the tests through `bash scripts/test.sh`');
  s3 ??= createS3Client({ bucket: '', prefix: '', region: 'us-east-1', endpoint, forcePathStyle: true });
  const bucket = `hark-contract-${randomBytes(6).toString('hex')}`;
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  return { store: new S3BlobStore(s3, bucket, 'uploads/'), bucket };
}
afterAll(() => s3?.destroy());

// What the upload rows would record: each key's multipart upload id (S3), as the API keeps it.
const recorded = new WeakMap<BlobStore, Map<string, string>>();
const recordedId = (store: BlobStore, key: string) => recorded.get(store)?.get(key) ?? null;

/** An append at the recorded offset, the way the API makes it; resolves with the bytes appended. */
async function append(
  store: BlobStore,
  key: string,
  offset: number,
  body: AsyncIterable<Buffer>,
  o: AppendOptions = opts(),
): Promise<number> {
  const ids = recorded.get(store) ?? new Map<string, string>();
  recorded.set(store, ids);
  const appended = await store.appendAt(key, { offset, uploadId: ids.get(key) ?? null }, body, {
    ...o,
    recordUploadId: async (id) => void ids.set(key, id),
  });
  return appended.bytes;
}

let fetched = 0;
async function contents(store: BlobStore, key: string, length: number): Promise<Buffer> {
  const dest = path.join(scratch, `fetched-${fetched++}`);
  await store.fetchTo(key, length, dest, { uploadId: recordedId(store, key) });
  return readFile(dest);
}

describe.each([
  ['local', async () => new LocalBlobStore(await mkdtemp(path.join(scratch, 'local-')))],
  ['s3', async () => (await s3Store()).store],
] as const)('BlobStore contract: %s driver', (_name, make) => {
  let store: BlobStore;
  beforeEach(async () => {
    store = await make();
  });

  it('keeps every byte of uneven chunks across part boundaries, in order', async () => {
    const a = randomBytes(3 * MiB + 7);
    const b = randomBytes(4 * MiB); // crosses the first 5 MiB boundary
    const c = randomBytes(1);
    const d = randomBytes(6 * MiB + 5); // crosses the second and third
    let offset = 0;
    for (const body of [a, b, c, d]) {
      const half = body.length >> 1;
      offset += await append(
        store,
        'k1',
        offset,
        chunks(body.subarray(0, half), body.subarray(half)),
        opts(),
      );
    }
    const all = Buffer.concat([a, b, c, d]);
    expect(offset).toBe(all.length);
    expect(sha(await contents(store, 'k1', offset))).toBe(sha(all));
  });

  it('an append Postgres never recorded (the API died after its parts were stored) is superseded by the next one at the recorded offset', async () => {
    const head = randomBytes(4 * MiB);
    await append(store, 'k2', 0, chunks(head), opts());
    // Stored in full (a part past the boundary and a new remainder), then the process died.
    expect(await append(store, 'k2', head.length, chunks(randomBytes(8 * MiB)), opts())).toBe(8 * MiB);
    const retry = randomBytes(3 * MiB);
    expect(await append(store, 'k2', head.length, chunks(retry), opts())).toBe(retry.length);
    const end = randomBytes(5);
    await append(store, 'k2', head.length + retry.length, chunks(end), opts());
    expect(sha(await contents(store, 'k2', 7 * MiB + 5))).toBe(sha(Buffer.concat([head, retry, end])));
  });

  it('truncate drops an append Postgres refused to record', async () => {
    const head = randomBytes(2 * MiB);
    await append(store, 'k3', 0, chunks(head), opts());
    await append(store, 'k3', head.length, chunks(randomBytes(MiB)), opts());
    await store.truncate('k3', head.length);
    expect(sha(await contents(store, 'k3', head.length))).toBe(sha(head));
  });

  it('refuses an append past the stored bytes (a recorded length the store lost) instead of filling the gap', async () => {
    const head = randomBytes(MiB);
    await append(store, 'k9', 0, chunks(head), opts());
    await expect(append(store, 'k9', 2 * MiB, chunks(randomBytes(10)), opts())).rejects.toBeInstanceOf(
      BlobMissingError,
    );
    expect(sha(await contents(store, 'k9', head.length))).toBe(sha(head));
  });

  it('a body that fails midway leaves the blob as it was, and the upload carries on', async () => {
    const head = randomBytes(MiB);
    await append(store, 'k4', 0, chunks(head), opts());
    await expect(
      append(store, 'k4', head.length, chunks(randomBytes(6 * MiB), new Error('client went away')), opts()),
    ).rejects.toThrow('client went away');
    const rest = randomBytes(2 * MiB);
    await append(store, 'k4', head.length, chunks(rest), opts());
    expect(sha(await contents(store, 'k4', 3 * MiB))).toBe(sha(Buffer.concat([head, rest])));
  });

  it('refuses a body over maxBytes and stores none of it', async () => {
    await append(store, 'k5', 0, chunks(Buffer.from('keep')), opts());
    await expect(
      append(store, 'k5', 4, chunks(Buffer.alloc(60), Buffer.alloc(60)), opts(100)),
    ).rejects.toThrow('too large');
    await expect(store.fetchTo('k5', 5, path.join(scratch, `fetched-${fetched++}`))).rejects.toBeInstanceOf(
      BlobMissingError,
    );
    expect((await contents(store, 'k5', 4)).toString()).toBe('keep');
  });

  it('fetchTo reports a missing blob and one shorter than recorded', async () => {
    await expect(
      store.fetchTo('nothing', 10, path.join(scratch, `fetched-${fetched++}`)),
    ).rejects.toMatchObject({ reason: 'missing' });
    await append(store, 'k6', 0, chunks(Buffer.from('short')), opts());
    await expect(store.fetchTo('k6', 6, path.join(scratch, `fetched-${fetched++}`))).rejects.toMatchObject({
      reason: 'short',
    });
  });

  it('remove leaves nothing behind, whatever state the blob was in', async () => {
    await append(store, 'k7', 0, chunks(randomBytes(6 * MiB)), opts()); // a part and a remainder
    await append(store, 'k8', 0, chunks(randomBytes(MiB)), opts());
    await contents(store, 'k8', MiB); // sealed
    for (const key of ['k7', 'k8']) {
      expect(await store.exists(key)).toBe(true);
      await store.remove(key);
      expect(await store.exists(key)).toBe(false);
      await store.remove(key); // idempotent
    }
  });

  it('staleKeys lists what was written before the given time, a page at a time from a cursor', async () => {
    await append(store, 'k9', 0, chunks(randomBytes(6 * MiB)), opts()); // a part and a remainder
    for (const k of ['ka', 'kb', 'kc']) await append(store, k, 0, chunks(Buffer.from(k)), opts());
    const keys = async (before: Date, limit: number) => {
      const out = new Set<string>();
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await store.staleKeys(before, { cursor, limit });
        for (const k of page.keys) out.add(k);
        cursor = page.next;
        pages++;
      } while (cursor !== null && pages < 20);
      return { keys: out, pages };
    };
    const later = new Date(Date.now() + 60_000);
    expect((await keys(later, 1000)).keys).toEqual(new Set(['k9', 'ka', 'kb', 'kc']));
    // One name a page: every key is still reached, in more pages.
    const paged = await keys(later, 1);
    expect(paged.keys).toEqual(new Set(['k9', 'ka', 'kb', 'kc']));
    expect(paged.pages).toBeGreaterThanOrEqual(4);
    expect((await keys(new Date(Date.now() - 60_000), 1000)).keys).toEqual(new Set());
    // A cursor the driver does not know starts from the beginning.
    expect((await store.staleKeys(later, { cursor: '{"nonsense":1}', limit: 1000 })).keys).toContain('k9');
  });

  it('rejects keys that could escape their place', async () => {
    await expect(store.fetchTo('../etc/passwd', 1, path.join(scratch, 'x'))).rejects.toThrow(
      'invalid blob key',
    );
  });
});

describe('S3 driver specifics', () => {
  it('keeps one remainder object, parts of exactly 5 MiB, and no multipart upload once sealed', async () => {
    const { store, bucket } = await s3Store();
    let offset = 0;
    let previous = 0;
    for (const size of [MiB, 3 * MiB, 2 * MiB, 1000]) {
      previous = offset;
      offset += await append(store, 's1', offset, chunks(randomBytes(size)), opts());
    }
    const names = async () =>
      ((await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'uploads/s1' }))).Contents ?? [])
        .map((o) => o.Key)
        .sort();
    // 6 MiB + 1000: part 1 holds 5 MiB, the remainder the rest. The remainder of the length
    // before the last append stays until the next append shows that Postgres recorded it;
    // every older one is gone.
    expect(await names()).toEqual([`uploads/s1.tail-${previous}`, `uploads/s1.tail-${offset}`].sort());
    await contents(store, 's1', offset);
    expect(await names()).toEqual(['uploads/s1']);
    const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: 'uploads/' }));
    expect(uploads.Uploads ?? []).toEqual([]);
    expect(S3_PART_BYTES).toBe(5 * MiB);
  });

  it('an upload whose row recorded no multipart upload id (written before ids were recorded) is found by listing', async () => {
    const { store } = await s3Store();
    const body = [randomBytes(6 * MiB), randomBytes(5 * MiB + 3)];
    const unrecorded = (offset: number, bytes: Buffer) =>
      store.appendAt('s4', { offset, uploadId: null }, chunks(bytes), opts());
    const first = await unrecorded(0, body[0]!);
    expect(first.uploadId).toEqual(expect.any(String));
    // The listing finds the same upload, which the caller then records.
    expect(await unrecorded(body[0]!.length, body[1]!)).toEqual({
      bytes: body[1]!.length,
      uploadId: first.uploadId,
    });
    const dest = path.join(scratch, `fetched-${fetched++}`);
    await store.fetchTo('s4', 11 * MiB + 3, dest);
    expect(sha(await readFile(dest))).toBe(sha(Buffer.concat(body)));
  });

  it('a sealed blob takes no more bytes', async () => {
    const { store } = await s3Store();
    await append(store, 's2', 0, chunks(Buffer.from('abc')), opts());
    await contents(store, 's2', 3);
    await expect(append(store, 's2', 3, chunks(Buffer.from('d')), opts())).rejects.toBeInstanceOf(
      BlobSealedError,
    );
  });

  it('an unreachable store is reported as unavailable, without credentials in the error', async () => {
    const client = createS3Client({
      bucket: 'b',
      prefix: '',
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:9',
      forcePathStyle: true,
    });
    const store = new S3BlobStore(client, 'b');
    const err = await append(store, 's3', 0, chunks(Buffer.from('x')), opts()).catch((e: unknown) => e);
    client.destroy();
    expect(err).toBeInstanceOf(BlobStoreUnavailableError);
    const text = `${String(err)} ${JSON.stringify(err)}`;
    expect(text).not.toContain(process.env.AWS_SECRET_ACCESS_KEY!);
    expect(text).not.toContain(process.env.AWS_ACCESS_KEY_ID!);
  });
});
