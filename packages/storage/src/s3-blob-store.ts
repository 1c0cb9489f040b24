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
import type { AppendOptions, BlobStore } from './blob-store';
import { readBounded } from './read-bounded';
import { isNotFound, s3Call } from './s3-client';
import { S3Layout } from './s3-layout';
import { PartSplitter } from './s3-part-splitter';

/**
 * S3 driver: an upload grows as an S3 multipart upload plus a trailing remainder object (the
 * layout and why it survives a crash between a part's PUT and Postgres: `s3-layout.ts`). The
 * first `fetchTo` seals it: the remainder becomes the last part and the multipart upload is
 * completed into one object, which workers then read with ranged GETs.
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
    offset: number,
    body: AsyncIterable<Buffer>,
    opts: AppendOptions,
  ): Promise<number> {
    const name = this.layout.object(key);
    const { fullParts, rest } = this.layout.split(offset);
    const [found, head] = await Promise.all([
      this.findUpload(name),
      rest > 0 ? this.getTail(key, offset) : Promise.resolve(Buffer.alloc(0)),
      this.dropTails(key, offset),
    ]);
    if (!found && offset > 0 && (await this.size(name)) !== null) throw new BlobSealedError(key);
    if (!head || (!found && fullParts > 0)) throw new BlobMissingError(key, 'short');
    let uploadId: Promise<string> | null = found ? Promise.resolve(found) : null;
    const upload = async (partNumber: number, part: Buffer) => {
      uploadId ??= this.createUpload(name);
      await this.putPart(name, await uploadId, partNumber, part);
    };
    const parts = new PartSplitter(fullParts + 1, this.layout.partBytes, upload, head);
    try {
      const received = await readBounded(body, opts, (chunk) => parts.push(chunk));
      const remainder = await parts.finish();
      if (received > 0 && remainder.length > 0) {
        const tail = this.layout.tail(key, offset + received);
        await s3Call('put remainder', () =>
          this.client.send(
            new PutObjectCommand({
              Bucket: this.bucket,
              Key: tail,
              Body: remainder,
              ContentLength: remainder.length,
            }),
          ),
        );
      }
      // Parts past `offset` stay unreachable until a later append overwrites them or the seal
      // leaves them out; the remainder of `offset` stays until the next append or truncate.
      return received;
    } catch (e) {
      await parts.settle();
      throw e;
    }
  }

  async truncate(key: string, length: number): Promise<void> {
    await this.dropTails(key, length);
  }

  async fetchTo(
    key: string,
    length: number,
    dest: string,
    opts: { signal?: AbortSignal } = {},
  ): Promise<void> {
    const name = this.layout.object(key);
    let size = await this.size(name);
    if (size === null) size = await this.seal(key, length);
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
  private async seal(key: string, length: number): Promise<number> {
    const name = this.layout.object(key);
    try {
      return await this.completeAt(key, name, length);
    } catch (e) {
      const size = await this.size(name);
      if (size !== null) return size;
      throw e;
    }
  }

  private async completeAt(key: string, name: string, length: number): Promise<number> {
    const { fullParts, rest } = this.layout.split(length);
    const [uploadId, tail] = await Promise.all([
      this.findUpload(name),
      rest > 0 ? this.getTail(key, length) : Promise.resolve(Buffer.alloc(0)),
    ]);
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

  /** The remainder completing `end`, or null when there is none. */
  private async getTail(key: string, end: number): Promise<Buffer | null> {
    try {
      const got = await s3Call('get remainder', () =>
        this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: this.layout.tail(key, end) })),
      );
      const bytes = Buffer.from(await got.Body!.transformToByteArray());
      return bytes.length === this.layout.split(end).rest ? bytes : null;
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
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

  /** The blob's multipart upload (the oldest, should a crash have left two), or null. */
  private async findUpload(name: string): Promise<string | null> {
    return (await this.listUploads(name))[0] ?? null;
  }

  private async createUpload(name: string): Promise<string> {
    const created = await s3Call('create upload', () =>
      this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: name })),
    );
    if (!created.UploadId) throw new Error('the store created a multipart upload without an id');
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
