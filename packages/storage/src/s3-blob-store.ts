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
import type { AppendOptions, Appended, BlobPosition, BlobStore } from './blob-store';
import { readBounded } from './read-bounded';
import { isNotFound, s3Call } from './s3-client';
import { S3Layout } from './s3-layout';
import { PartSplitter } from './s3-part-splitter';

/** A remainder's metadata: the length whose remainder it extends (superseded once it is read). */
const EXTENDS = 'extends';

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
    const { offset } = at;
    const { fullParts, rest } = this.layout.split(offset);
    const known = await this.recordedUpload(name, offset, at.uploadId);
    if (known === null && fullParts > 0) throw await this.gone(key, name);
    const head = rest > 0 ? await this.getTail(key, offset) : { bytes: Buffer.alloc(0), extends: null };
    if (!head) throw await this.gone(key, name);
    // The remainder of `offset` completes a length Postgres recorded (an append starts only
    // there), so the remainder it extended is needed no more.
    const superseded =
      head.extends === null ? null : this.deleteTail(key, head.extends).catch(() => undefined);
    let started: Promise<string> | null = known === null ? null : Promise.resolve(known);
    let partsStored = 0;
    const upload = async (partNumber: number, part: Buffer) => {
      started ??= this.startUpload(name, opts);
      try {
        await this.putPart(name, await started, partNumber, part);
      } catch (e) {
        throw isNotFound(e) ? await this.gone(key, name) : e;
      }
      partsStored++;
    };
    const parts = new PartSplitter(fullParts + 1, this.layout.partBytes, upload, head.bytes);
    try {
      const received = await readBounded(body, opts, (chunk) => parts.push(chunk));
      const remainder = await parts.finish();
      // Nothing above touched the stored blob (an offset on a part boundary, no part filled):
      // make sure a worker has not sealed it.
      if (offset > 0 && rest === 0 && partsStored === 0 && received > 0 && (await this.size(name)) !== null)
        throw new BlobSealedError(key);
      if (received > 0 && remainder.length > 0) {
        await this.putTail(key, offset + received, remainder, rest > 0 ? offset : null);
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

  async truncate(key: string, length: number): Promise<void> {
    await this.dropTails(key, length);
  }

  async fetchTo(
    key: string,
    length: number,
    dest: string,
    opts: { signal?: AbortSignal; uploadId?: string | null } = {},
  ): Promise<void> {
    const name = this.layout.object(key);
    let size = await this.size(name);
    if (size === null) size = await this.seal(key, length, opts.uploadId ?? null);
    if (size < length) throw new BlobMissingError(key, 'short');
    if (length === 0) return writeFile(dest, '', { flag: 'wx' });
    const signal = opts.signal;
    const got = await s3Call('get object', () =>
      this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: name, Range: `bytes=0-${length - 1}` }),
        {
          ...(signal ? { abortSignal: signal } : {}),
        },
      ),
    );
    await pipeline(got.Body as Readable, createWriteStream(dest, { flags: 'wx' }), {
      ...(signal ? { signal } : {}),
    });
  }

  async remove(key: string): Promise<void> {
    const name = this.layout.object(key);
    await Promise.all([
      s3Call('delete object', () =>
        this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: name })),
      ),
      this.dropTails(key, null),
      this.listUploads(name).then((ids) => Promise.all(ids.map((id) => this.abortUpload(name, id)))),
    ]);
  }

  async exists(key: string): Promise<boolean> {
    const name = this.layout.object(key);
    const [size, tails, uploads] = await Promise.all([
      this.size(name),
      this.listTails(key),
      this.listUploads(name),
    ]);
    return size !== null || tails.length > 0 || uploads.length > 0;
  }

  async *staleKeys(before: Date): AsyncIterable<string> {
    let token: string | undefined;
    do {
      const page = await s3Call('list objects', () =>
        this.client.send(
          new ListObjectsV2Command({
            Bucket: this.bucket,
            Prefix: this.layout.prefix,
            ContinuationToken: token,
          }),
        ),
      );
      for (const o of page.Contents ?? []) {
        const key = o.Key ? this.layout.keyOf(o.Key) : null;
        if (key && o.LastModified && o.LastModified < before) yield key;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    let keyMarker: string | undefined;
    let idMarker: string | undefined;
    do {
      const page = await s3Call('list uploads', () =>
        this.client.send(
          new ListMultipartUploadsCommand({
            Bucket: this.bucket,
            Prefix: this.layout.prefix,
            KeyMarker: keyMarker,
            UploadIdMarker: idMarker,
          }),
        ),
      );
      for (const u of page.Uploads ?? []) {
        const key = u.Key ? this.layout.keyOf(u.Key) : null;
        if (key && u.Initiated && u.Initiated < before) yield key;
      }
      keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
      idMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
    } while (keyMarker);
  }

  /**
   * Completes the blob at `length` bytes: full parts 1..n as stored (each must be whole), the
   * remainder of `length` as the last part; parts an unrecorded append left past `length` are
   * left out and go with the multipart upload. A blob with no full part becomes one plain PUT.
   * Two workers sealing at once: the loser finds the winner's object. Resolves with its size.
   */
  private async seal(key: string, length: number, uploadId: string | null): Promise<number> {
    const name = this.layout.object(key);
    try {
      return await this.completeAt(key, name, length, uploadId);
    } catch (e) {
      const size = await this.size(name);
      if (size !== null) return size;
      throw e;
    }
  }

  private async completeAt(
    key: string,
    name: string,
    length: number,
    recorded: string | null,
  ): Promise<number> {
    const { fullParts, rest } = this.layout.split(length);
    const [uploadId, got] = await Promise.all([
      this.recordedUpload(name, length, recorded),
      rest > 0 ? this.getTail(key, length) : Promise.resolve({ bytes: Buffer.alloc(0) }),
    ]);
    const tail = got?.bytes;
    if (!tail || (!uploadId && fullParts > 0)) {
      const anything = uploadId !== null || (await this.listTails(key)).length > 0;
      throw new BlobMissingError(key, anything ? 'short' : 'missing');
    }
    if (!uploadId) {
      if (length === 0) throw new BlobMissingError(key, 'missing');
      await s3Call('put object', () =>
        this.client.send(
          new PutObjectCommand({ Bucket: this.bucket, Key: name, Body: tail, ContentLength: tail.length }),
        ),
      );
    } else {
      const stored = await this.listParts(name, uploadId);
      const parts: Part[] = [];
      for (let n = 1; n <= fullParts; n++) {
        const p = stored.get(n);
        if (!p || p.Size !== this.layout.partBytes) throw new BlobMissingError(key, 'short');
        parts.push({ PartNumber: n, ETag: p.ETag });
      }
      if (tail.length > 0)
        parts.push({
          PartNumber: fullParts + 1,
          ETag: await this.putPart(name, uploadId, fullParts + 1, tail),
        });
      await s3Call('complete upload', () =>
        this.client.send(
          new CompleteMultipartUploadCommand({
            Bucket: this.bucket,
            Key: name,
            UploadId: uploadId,
            MultipartUpload: { Parts: parts },
          }),
        ),
      );
    }
    await this.dropTails(key, null);
    return length;
  }

  /** The object's size, or null when there is none. */
  private async size(name: string): Promise<number | null> {
    try {
      const h = await s3Call('head object', () =>
        this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: name })),
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
  private async getTail(key: string, end: number): Promise<{ bytes: Buffer; extends: number | null } | null> {
    try {
      const got = await s3Call('get remainder', () =>
        this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.layout.tail(key, end) })),
      );
      const bytes = Buffer.from(await got.Body!.transformToByteArray());
      if (bytes.length !== this.layout.split(end).rest) return null;
      const from = got.Metadata?.[EXTENDS];
      return { bytes, extends: from && /^\d+$/.test(from) ? Number(from) : null };
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  /** Stores the remainder completing `end`, naming the length whose remainder it extends. */
  private async putTail(key: string, end: number, bytes: Buffer, extended: number | null): Promise<void> {
    await s3Call('put remainder', () =>
      this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: this.layout.tail(key, end),
          Body: bytes,
          ContentLength: bytes.length,
          ...(extended === null ? {} : { Metadata: { [EXTENDS]: String(extended) } }),
        }),
      ),
    );
  }

  private async deleteTail(key: string, end: number): Promise<void> {
    await s3Call('delete remainder', () =>
      this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.layout.tail(key, end) })),
    );
  }

  /**
   * Why the blob takes no append at a recorded length it cannot continue: sealed by a worker,
   * or something recorded is gone.
   */
  private async gone(key: string, name: string): Promise<Error> {
    return (await this.size(name)) !== null ? new BlobSealedError(key) : new BlobMissingError(key, 'short');
  }

  private async listTails(key: string): Promise<{ name: string; end: number }[]> {
    const page = await s3Call('list remainders', () =>
      this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: this.layout.tails(key) })),
    );
    return (page.Contents ?? []).flatMap((o) => {
      const end = o.Key ? this.layout.tailEnd(o.Key) : null;
      return o.Key && end !== null ? [{ name: o.Key, end }] : [];
    });
  }

  /** Deletes every remainder but the one completing `keep` (all of them for null). */
  private async dropTails(key: string, keep: number | null): Promise<void> {
    const stale = (await this.listTails(key)).filter((t) => t.end !== keep);
    await Promise.all(
      stale.map((t) =>
        s3Call('delete remainder', () =>
          this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: t.name })),
        ),
      ),
    );
  }

  private async listUploads(name: string): Promise<string[]> {
    const page = await s3Call('list uploads', () =>
      this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: name })),
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
  ): Promise<string | null> {
    if (recorded !== null || this.layout.split(length).fullParts === 0) return recorded;
    return (await this.listUploads(name))[0] ?? null;
  }

  /** Starts the blob's multipart upload and has the caller record its id before any part goes in. */
  private async startUpload(name: string, opts: AppendOptions): Promise<string> {
    const created = await s3Call('create upload', () =>
      this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: name })),
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
  ): Promise<string | undefined> {
    const put = await s3Call('upload part', () =>
      this.client.send(
        new UploadPartCommand({
          Bucket: this.bucket,
          Key: name,
          UploadId: uploadId,
          PartNumber: partNumber,
          Body: body,
          ContentLength: body.length,
        }),
      ),
    );
    return put.ETag;
  }

  private async listParts(name: string, uploadId: string): Promise<Map<number, Part>> {
    const parts = new Map<number, Part>();
    let marker: string | undefined;
    do {
      const page = await s3Call('list parts', () =>
        this.client.send(
          new ListPartsCommand({
            Bucket: this.bucket,
            Key: name,
            UploadId: uploadId,
            PartNumberMarker: marker,
          }),
        ),
      );
      for (const p of page.Parts ?? []) if (p.PartNumber) parts.set(p.PartNumber, p);
      marker = page.IsTruncated ? page.NextPartNumberMarker : undefined;
    } while (marker);
    return parts;
  }

  private async abortUpload(name: string, uploadId: string): Promise<void> {
    try {
      await s3Call('abort upload', () =>
        this.client.send(
          new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: name, UploadId: uploadId }),
        ),
      );
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
}
