import type { Readable } from 'node:stream';
import { HarkError, LIMITS, newId } from '@hark/core';
import type { Db } from '@hark/db';
import type { BlobStore, UploadHashing } from '@hark/storage';
import type { UploadLock } from './upload-lock';

export interface UploadView {
  id: string;
  receivedBytes: number;
  expectedBytes: number | null;
  sha256: string | null;
  createdAt: string;
}

interface UploadRow {
  id: string;
  receivedBytes: bigint;
  expectedBytes: bigint | null;
  sha256: string | null;
  createdAt: Date;
}

export function uploadView(u: UploadRow): UploadView {
  return {
    id: u.id,
    receivedBytes: Number(u.receivedBytes),
    expectedBytes: u.expectedBytes === null ? null : Number(u.expectedBytes),
    sha256: u.sha256,
    createdAt: u.createdAt.toISOString(),
  };
}

const SELECT = { id: true, receivedBytes: true, expectedBytes: true, sha256: true, createdAt: true, hashState: true } as const;
function requestTooLarge(): HarkError {
  return new HarkError('payload_too_large', 'A request body may carry at most 100 MB; create the upload empty or smaller and append the rest with PUT.');
}

export const UPLOAD_ID = /^up_[A-Za-z0-9_-]{1,33}$/;

/**
 * Resumable uploads. A chunk is written and fsync'ed, then `receivedBytes` (and the running
 * SHA-256 state) advance in Postgres only if nobody else moved them; on any failure the file is
 * cut back, so `receivedBytes` is always the durable length.
 */
export class UploadService {
  constructor(
    private readonly db: Db,
    private readonly blobs: BlobStore,
    private readonly lock: UploadLock,
    private readonly hashing: UploadHashing,
  ) {}

  /**
   * POST: the body (possibly empty) is written under a fresh id before the row exists, so a
   * refused or interrupted body leaves no upload behind.
   */
  async createWithBody(
    accountId: string,
    input: { expectedBytes: number | null; sha256: string | null },
    body: Readable,
    declaredLength: number | null,
  ): Promise<UploadView> {
    if (declaredLength !== null && declaredLength > LIMITS.maxUploadRequestBytes) throw requestTooLarge();
    const id = newId('up');
    const hash = await this.hashing.start();
    let written = 0;
    try {
      written = await this.blobs.appendAt(id, 0, body, {
        maxBytes: LIMITS.maxUploadRequestBytes,
        onData: (c) => hash.update(c),
        tooLarge: requestTooLarge,
      });
      const row = await this.db.upload.create({
        data: {
          id,
          accountId,
          expectedBytes: input.expectedBytes,
          sha256: input.sha256,
          receivedBytes: BigInt(written),
          hashState: Buffer.from(await hash.save()),
        },
        select: SELECT,
      });
      return uploadView(row);
    } catch (e) {
      await this.blobs.remove(id);
      throw e;
    } finally {
      hash.end();
    }
  }

  async get(accountId: string, id: string): Promise<UploadView> {
    return uploadView(await this.find(accountId, id));
  }

  private async find(accountId: string, id: string) {
    if (!UPLOAD_ID.test(id)) throw new HarkError('upload_not_found');
    const row = await this.db.upload.findFirst({ where: { id, accountId, erasedAt: null }, select: SELECT });
    if (!row) throw new HarkError('upload_not_found');
    return row;
  }

  /**
   * Appends one body. `declaredLength` (Content-Length) lets oversize bodies be refused before
   * a byte is read; bodies without it are counted as they stream.
   */
  async append(
    accountId: string,
    id: string,
    body: Readable,
    declaredLength: number | null,
  ): Promise<UploadView> {
    if (declaredLength !== null && declaredLength > LIMITS.maxChunkBytes) throw new HarkError('chunk_too_large');
    if (declaredLength === 0) throw new HarkError('chunk_empty');
    await this.find(accountId, id);
    const held = await this.lock.acquire(id);
    if (!held) throw new HarkError('upload_busy');
    try {
      // Re-read under the lock: another writer may have finished just before we got it.
      const current = await this.find(accountId, id);
      const offset = Number(current.receivedBytes);
      const room = LIMITS.maxUploadBytes - offset;
      if (declaredLength !== null && declaredLength > room) throw new HarkError('upload_too_large');
      const hash = await this.hashing.start(current.hashState);
      try {
        const written = await this.blobs.appendAt(id, offset, body, {
          maxBytes: Math.min(LIMITS.maxChunkBytes, room),
          onData: (c) => hash.update(c),
          tooLarge: () => new HarkError(room < LIMITS.maxChunkBytes ? 'upload_too_large' : 'chunk_too_large'),
        });
        if (written === 0) throw new HarkError('chunk_empty');
        try {
          const n = await this.db.upload.updateMany({
            where: { id, receivedBytes: current.receivedBytes },
            data: { receivedBytes: BigInt(offset + written), hashState: Buffer.from(await hash.save()) },
          });
          if (n.count !== 1) throw new Error('upload moved under its lock');
        } catch (e) {
          await this.blobs.truncate(id, offset);
          throw e;
        }
        return uploadView({ ...current, receivedBytes: BigInt(offset + written) });
      } finally {
        hash.end();
      }
    } finally {
      await held.release();
    }
  }
}
