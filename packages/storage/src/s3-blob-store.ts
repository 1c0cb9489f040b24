import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  type Part,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { BlobMissingError, BlobSealedError } from './blob-errors';
import type {
  AppendOptions,
  Appended,
  BlobPosition,
  BlobStore,
  StaleKeysPage,
  StoreCallOptions,
} from './blob-store';
import { readBounded } from './read-bounded';
import { isNotFound, s3Call } from './s3-client';
import { S3Layout } from './s3-layout';
import { PartSplitter } from './s3-part-splitter';

/** A remainder's metadata: the length whose remainder it extends (superseded once it is read). */
const EXTENDS = 'extends';

/** Where a page of `staleKeys` starts: in the object listing, or in the multipart upload one. */
type ListCursor = { objects: string } | { uploads: [key: string, uploadId: string] };

function parseCursor(cursor: string | null): ListCursor {
  try {
    const c = JSON.parse(cursor ?? 'null') as unknown;
    if (c && typeof (c as { objects?: unknown }).objects === 'string') return c as ListCursor;
    const u = (c as { uploads?: unknown } | null)?.uploads;
    if (Array.isArray(u) && u.length === 2 && u.every((x) => typeof x === 'string'))
      return { uploads: [u[0] as string, u[1] as string] };
  } catch {
    // another driver's cursor, or none: from the start
  }
  return { objects: '' };
}

/**
 * S3 driver: an upload grows as an S3 multipart upload plus a trailing remainder object (the
 * layout and why it survives a crash between a part's PUT and Postgres: `s3-layout.ts`). The
 * first `fetchTo` seals it: the remainder becomes the last part and the multipart upload is
 * completed into one object, which workers then read with ranged GETs.
 *
 * An append lists nothing: the part numbers and the remainder's name follow from the recorded
 * offset, and the multipart upload's id is recorded with the upload row (`recordUploadId`).
 * Per chunk it reads the remainder of the offset (when the offset is not a whole number of
 * parts: S3 cannot read a part back), puts the parts the chunk completes and the new remainder,
 * and deletes the remainder the offset's one superseded (named in its metadata). Listings are
 * left to the rare paths: the seal (once per upload), `truncate` after Postgres refused a
 * chunk, and the sweepers' `exists`, `remove` and `staleKeys`.
 *
 * Every call has the client's time-outs (`createS3Client`) and the caller's abort signal, if any.
 */
export class S3BlobStore implements BlobStore {
  private readonly layout: S3Layout;

  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    prefix = '',
    partBytes?: number,
  ) {
    this.layout = new S3Layout(prefix, partBytes);
  }

  async appendAt(
    key: string,
    at: BlobPosition,
    body: AsyncIterable<Buffer>,
    opts: AppendOptions,
  ): Promise<Appended> {
    const name = this.layout.object(key);
    const { signal } = opts;
    const { offset } = at;
    const { fullParts, rest } = this.layout.split(offset);
    const known = await this.recordedUpload(name, offset, at.uploadId, signal);
    if (known === null && fullParts > 0) throw await this.gone(key, name, signal);
    const head =
      rest > 0 ? await this.getTail(key, offset, signal) : { bytes: Buffer.alloc(0), extends: null };
    if (!head) throw await this.gone(key, name, signal);
    // The remainder of `offset` completes a length Postgres recorded (an append starts only
    // there), so the remainder it extended is needed no more.
    const superseded =
      head.extends === null ? null : this.deleteTail(key, head.extends, signal).catch(() => undefined);
    let started: Promise<string> | null = known === null ? null : Promise.resolve(known);
    let partsStored = 0;
    const upload = async (partNumber: number, part: Buffer) => {
      started ??= this.startUpload(name, opts);
      try {
        await this.putPart(name, await started, partNumber, part, signal);
      } catch (e) {
        throw isNotFound(e) ? await this.gone(key, name, signal) : e;
      }
      partsStored++;
    };
    const parts = new PartSplitter(fullParts + 1, this.layout.partBytes, upload, head.bytes);
    try {
      const received = await readBounded(body, opts, (chunk) => parts.push(chunk));
      const remainder = await parts.finish();
      // Nothing above touched the stored blob (an offset on a part boundary, no part filled):
      // make sure a worker has not sealed it.
      if (
        offset > 0 &&
        rest === 0 &&
        partsStored === 0 &&
        received > 0 &&
        (await this.size(name, signal)) !== null
      )
        throw new BlobSealedError(key);
      if (received > 0 && remainder.length > 0) {
        await this.putTail(key, offset + received, remainder, rest > 0 ? offset : null, signal);
      }
      // Parts past `offset` stay unreachable until a later append overwrites them or the seal
      // leaves them out; the remainder of `offset` stays until an append shows that Postgres
      // recorded the new length.
      return { bytes: received, uploadId: started === null ? null : await started };
    } catch (e) {
      await parts.settle();
      throw e;
    } finally {
      await superseded;
    }
  }

  async truncate(key: string, length: number, opts: StoreCallOptions = {}): Promise<void> {
    await this.dropTails(key, length, opts.signal);
  }

  async fetchTo(
    key: string,
    length: number,
    dest: string,
    opts: { signal?: AbortSignal; uploadId?: string | null } = {},
  ): Promise<void> {
    const { signal } = opts;
    const name = this.layout.object(key);
    let size = await this.size(name, signal);
    if (size === null) size = await this.seal(key, length, opts.uploadId ?? null, signal);
    if (size < length) throw new BlobMissingError(key, 'short');
    if (length === 0) return writeFile(dest, '', { flag: 'wx' });
    // The body is read inside the call: a store that stops sending mid-object fails it (the
    // client's idle time-out) as unavailable, like one that never answered.
    await s3Call(
      'get object',
      async (o) => {
        const got = await this.client.send(
          new GetObjectCommand({ Bucket: this.bucket, Key: name, Range: `bytes=0-${length - 1}` }),
          o,
        );
        await pipeline(got.Body as Readable, createWriteStream(dest, { flags: 'wx' }), {
          ...(signal ? { signal } : {}),
        });
      },
      signal,
    );
  }

  async remove(key: string, opts: StoreCallOptions = {}): Promise<void> {
    const { signal } = opts;
    const name = this.layout.object(key);
    await Promise.all([
      s3Call(
        'delete object',
        (o) => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: name }), o),
        signal,
      ),
      this.dropTails(key, null, signal),
      this.listUploads(name, signal).then((ids) =>
        Promise.all(ids.map((id) => this.abortUpload(name, id, signal))),
      ),
    ]);
  }

  async exists(key: string, opts: StoreCallOptions = {}): Promise<boolean> {
    const { signal } = opts;
    const name = this.layout.object(key);
    const [size, tails, uploads] = await Promise.all([
      this.size(name, signal),
      this.listTails(key, signal),
      this.listUploads(name, signal),
    ]);
    return size !== null || tails.length > 0 || uploads.length > 0;
  }

  /**
   * One listing call per page: the objects under the prefix (whole blobs and remainders, `limit`
   * a page), then the multipart uploads under it (S3's own page size). The cursor is the last
   * name seen (`StartAfter`), or the upload listing's markers.
   */
  async staleKeys(
    before: Date,
    page: { cursor: string | null; limit: number } & StoreCallOptions,
  ): Promise<StaleKeysPage> {
    const { signal } = page;
    const at = parseCursor(page.cursor);
    const keys: string[] = [];
    if ('objects' in at) {
      const got = await s3Call(
        'list objects',
        (o) =>
          this.client.send(
            new ListObjectsV2Command({
              Bucket: this.bucket,
              Prefix: this.layout.prefix,
              MaxKeys: page.limit,
              ...(at.objects ? { StartAfter: at.objects } : {}),
            }),
            o,
          ),
        signal,
      );
      const contents = got.Contents ?? [];
      for (const o of contents) {
        const key = o.Key ? this.layout.keyOf(o.Key) : null;
        if (key && o.LastModified && o.LastModified < before) keys.push(key);
      }
      const last = contents.at(-1)?.Key;
      const next: ListCursor = got.IsTruncated && last ? { objects: last } : { uploads: ['', ''] };
      return { keys, next: JSON.stringify(next) };
    }
    const [keyMarker, idMarker] = at.uploads;
    const got = await s3Call(
      'list uploads',
      (o) =>
        this.client.send(
          new ListMultipartUploadsCommand({
            Bucket: this.bucket,
            Prefix: this.layout.prefix,
            // No MaxUploads (S3's page is 1,000 uploads): S3Proxy answers 501 to it, and to
            // KeyMarker, which is sent only to continue a page S3 cut short.
            ...(keyMarker ? { KeyMarker: keyMarker, UploadIdMarker: idMarker } : {}),
          }),
          o,
        ),
      signal,
    );
    for (const u of got.Uploads ?? []) {
      const key = u.Key ? this.layout.keyOf(u.Key) : null;
      if (key && u.Initiated && u.Initiated < before) keys.push(key);
    }
    const more = got.IsTruncated && got.NextKeyMarker;
    return {
      keys,
      next: more ? JSON.stringify({ uploads: [got.NextKeyMarker, got.NextUploadIdMarker ?? ''] }) : null,
    };
  }

  /**
   * Completes the blob at `length` bytes: full parts 1..n as stored (each must be whole), the
   * remainder of `length` as the last part; parts an unrecorded append left past `length` are
   * left out and go with the multipart upload. A blob with no full part becomes one plain PUT.
   * Two workers sealing at once: the loser finds the winner's object. Resolves with its size.
   */
  private async seal(
    key: string,
    length: number,
    uploadId: string | null,
    signal: AbortSignal | undefined,
  ): Promise<number> {
    const name = this.layout.object(key);
    try {
      return await this.completeAt(key, name, length, uploadId, signal);
    } catch (e) {
      if (signal?.aborted) throw e;
      const size = await this.size(name, signal);
      if (size !== null) return size;
      throw e;
    }
  }

  private async completeAt(
    key: string,
    name: string,
    length: number,
    recorded: string | null,
    signal: AbortSignal | undefined,
  ): Promise<number> {
    const { fullParts, rest } = this.layout.split(length);
    const [uploadId, got] = await Promise.all([
      this.recordedUpload(name, length, recorded, signal),
      rest > 0 ? this.getTail(key, length, signal) : Promise.resolve({ bytes: Buffer.alloc(0) }),
    ]);
    const tail = got?.bytes;
    if (!tail || (!uploadId && fullParts > 0)) {
      const anything = uploadId !== null || (await this.listTails(key, signal)).length > 0;
      throw new BlobMissingError(key, anything ? 'short' : 'missing');
    }
    if (!uploadId) {
      if (length === 0) throw new BlobMissingError(key, 'missing');
      await s3Call(
        'put object',
        (o) =>
          this.client.send(
            new PutObjectCommand({ Bucket: this.bucket, Key: name, Body: tail, ContentLength: tail.length }),
            o,
          ),
        signal,
      );
    } else {
      const stored = await this.listParts(name, uploadId, signal);
      const parts: Part[] = [];
      for (let n = 1; n <= fullParts; n++) {
        const p = stored.get(n);
        if (!p || p.Size !== this.layout.partBytes) throw new BlobMissingError(key, 'short');
        parts.push({ PartNumber: n, ETag: p.ETag });
      }
      if (tail.length > 0)
        parts.push({
          PartNumber: fullParts + 1,
          ETag: await this.putPart(name, uploadId, fullParts + 1, tail, signal),
        });
      await s3Call(
        'complete upload',
        (o) =>
          this.client.send(
            new CompleteMultipartUploadCommand({
              Bucket: this.bucket,
              Key: name,
              UploadId: uploadId,
              MultipartUpload: { Parts: parts },
            }),
            o,
          ),
        signal,
      );
    }
    await this.dropTails(key, null, signal);
    return length;
  }

  /** The object's size, or null when there is none. */
  private async size(name: string, signal: AbortSignal | undefined): Promise<number | null> {
    try {
      const h = await s3Call(
        'head object',
        (o) => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: name }), o),
        signal,
      );
      return h.ContentLength ?? 0;
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  /**
   * The remainder completing `end` and the length whose remainder it extended (its metadata;
   * null when that length was a whole number of parts, or for a remainder written before the
   * metadata was), or null when there is none.
   */
  private async getTail(
    key: string,
    end: number,
    signal: AbortSignal | undefined,
  ): Promise<{ bytes: Buffer; extends: number | null } | null> {
    try {
      return await s3Call(
        'get remainder',
        async (o) => {
          const got = await this.client.send(
            new GetObjectCommand({ Bucket: this.bucket, Key: this.layout.tail(key, end) }),
            o,
          );
          const bytes = Buffer.from(await got.Body!.transformToByteArray());
          if (bytes.length !== this.layout.split(end).rest) return null;
          const from = got.Metadata?.[EXTENDS];
          return { bytes, extends: from && /^\d+$/.test(from) ? Number(from) : null };
        },
        signal,
      );
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  /** Stores the remainder completing `end`, naming the length whose remainder it extends. */
  private async putTail(
    key: string,
    end: number,
    bytes: Buffer,
    extended: number | null,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    await s3Call(
      'put remainder',
      (o) =>
        this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: this.layout.tail(key, end),
            Body: bytes,
            ContentLength: bytes.length,
            ...(extended === null ? {} : { Metadata: { [EXTENDS]: String(extended) } }),
          }),
          o,
        ),
      signal,
    );
  }

  private async deleteTail(key: string, end: number, signal: AbortSignal | undefined): Promise<void> {
    await s3Call(
      'delete remainder',
      (o) =>
        this.client.send(
          new DeleteObjectCommand({ Bucket: this.bucket, Key: this.layout.tail(key, end) }),
          o,
        ),
      signal,
    );
  }

  /**
   * Why the blob takes no append at a recorded length it cannot continue: sealed by a worker,
   * or something recorded is gone.
   */
  private async gone(key: string, name: string, signal: AbortSignal | undefined): Promise<Error> {
    return (await this.size(name, signal)) !== null
      ? new BlobSealedError(key)
      : new BlobMissingError(key, 'short');
  }

  private async listTails(
    key: string,
    signal: AbortSignal | undefined,
  ): Promise<{ name: string; end: number }[]> {
    const page = await s3Call(
      'list remainders',
      (o) =>
        this.client.send(
          new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.layout.tails(key) }),
          o,
        ),
      signal,
    );
    return (page.Contents ?? []).flatMap((o) => {
      const end = o.Key ? this.layout.tailEnd(o.Key) : null;
      return o.Key && end !== null ? [{ name: o.Key, end }] : [];
    });
  }

  /** Deletes every remainder but the one completing `keep` (all of them for null). */
  private async dropTails(key: string, keep: number | null, signal: AbortSignal | undefined): Promise<void> {
    const stale = (await this.listTails(key, signal)).filter((t) => t.end !== keep);
    await Promise.all(
      stale.map((t) =>
        s3Call(
          'delete remainder',
          (o) => this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: t.name }), o),
          signal,
        ),
      ),
    );
  }

  private async listUploads(name: string, signal: AbortSignal | undefined): Promise<string[]> {
    const page = await s3Call(
      'list uploads',
      (o) => this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: name }), o),
      signal,
    );
    return (page.Uploads ?? [])
      .filter((u) => u.Key === name && u.UploadId)
      .sort((a, b) => (a.Initiated?.getTime() ?? 0) - (b.Initiated?.getTime() ?? 0))
      .map((u) => u.UploadId!);
  }

  /**
   * The multipart upload holding the parts of a blob of `length`: the recorded id; with none
   * recorded and full parts below `length`, a row from before ids were recorded, whose upload
   * is found by listing (the oldest, as such rows' appends used); otherwise null.
   */
  private async recordedUpload(
    name: string,
    length: number,
    recorded: string | null,
    signal: AbortSignal | undefined,
  ): Promise<string | null> {
    if (recorded !== null || this.layout.split(length).fullParts === 0) return recorded;
    return (await this.listUploads(name, signal))[0] ?? null;
  }

  /**
   * Starts the blob's multipart upload and has the caller record its id before any part goes in.
   * Not aborted once sent (only the client's time-outs end it): the store may create the upload
   * and answer after the caller left, and an id that is never recorded names a multipart upload
   * that no later append reuses and nothing but the erasure lists.
   */
  private async startUpload(name: string, opts: AppendOptions): Promise<string> {
    opts.signal?.throwIfAborted();
    const created = await s3Call('create upload', (o) =>
      this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: name }), o),
    );
    if (!created.UploadId) throw new Error('the store created a multipart upload without an id');
    await opts.recordUploadId?.(created.UploadId);
    return created.UploadId;
  }

  private async putPart(
    name: string,
    uploadId: string,
    partNumber: number,
    body: Buffer,
    signal: AbortSignal | undefined,
  ): Promise<string | undefined> {
    const put = await s3Call(
      'upload part',
      (o) =>
        this.client.send(
          new UploadPartCommand({
            Bucket: this.bucket,
            Key: name,
            UploadId: uploadId,
            PartNumber: partNumber,
            Body: body,
            ContentLength: body.length,
          }),
          o,
        ),
      signal,
    );
    return put.ETag;
  }

  private async listParts(
    name: string,
    uploadId: string,
    signal: AbortSignal | undefined,
  ): Promise<Map<number, Part>> {
    const parts = new Map<number, Part>();
    let marker: string | undefined;
    do {
      const page = await s3Call(
        'list parts',
        (o) =>
          this.client.send(
            new ListPartsCommand({
              Bucket: this.bucket,
              Key: name,
              UploadId: uploadId,
              PartNumberMarker: marker,
            }),
            o,
          ),
        signal,
      );
      for (const p of page.Parts ?? []) if (p.PartNumber) parts.set(p.PartNumber, p);
      marker = page.IsTruncated ? page.NextPartNumberMarker : undefined;
    } while (marker);
    return parts;
  }

  private async abortUpload(name: string, uploadId: string, signal: AbortSignal | undefined): Promise<void> {
    try {
      await s3Call(
        'abort upload',
        (o) =>
          this.client.send(
            new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: name, UploadId: uploadId }),
            o,
          ),
        signal,
      );
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}
