import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { HarkError, LIMITS, newId } from '@hark/core';
import { type Db, Prisma } from '@hark/db';
import {
  BlobMissingError,
  type BlobStore,
  BlobSealedError,
  type UploadHashing,
  isBlobStoreUnavailable,
} from '@hark/storage';
import { ERASED_UNREAD_UPLOAD, NO_EXPIRED_TRANSCRIPT, liveUploadWhere } from '@hark/transcripts';
import {
  BodyPrint,
  KeyTaken,
  claimUploadKey,
  findUploadKey,
  printBody,
  replayOf,
  requestHash,
} from './upload-idempotency';
import type { CreateUploadRequest } from '../schemas/create-upload';
import type { UploadLock } from './upload-lock';
import { watchIdle } from './idle-body';

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

const SELECT = {
  id: true,
  receivedBytes: true,
  expectedBytes: true,
  sha256: true,
  createdAt: true,
  hashState: true,
} as const;
function requestTooLarge(): HarkError {
  return new HarkError(
    'payload_too_large',
    'A request body may carry at most 100 MB; create the upload empty or smaller and append the rest with PUT.',
  );
}

/**
 * An append after a worker fetched the upload from the S3 store (which completes its multipart
 * upload): the bytes are fixed now. Not worth repeating, unlike a chunk in progress.
 */
function sealed(): HarkError {
  return new HarkError(
    'upload_busy',
    'This upload has been handed to a transcript and takes no more bytes; send the rest as a new upload.',
    undefined,
    undefined,
    false,
  );
}

/** How long a status read waits for a chunk being written (see `get`). */
const STATUS_WAIT_MS = 10_000;

export const UPLOAD_ID = /^up_[A-Za-z0-9_-]{1,33}$/;

/** How much an account may keep in uploads that no transcript has used yet. */
export interface UploadQuota {
  /** Cap while the account has credits available (`HARK_UPLOAD_QUOTA_BYTES`). */
  quotaBytes: number;
  /** Cap while `available` is 0 or less (`HARK_UPLOAD_NO_CREDIT_BYTES`). */
  noCreditBytes: number;
}

/** Options of `createWithBody`. */
export interface CreateWithBodyOptions {
  /**
   * Runs once the body is stored, before the upload's row is created; when it throws, the stored
   * bytes are removed, nothing is recorded and its error is thrown. The OpenAI route reads and
   * checks the form fields that follow the file here.
   */
  beforeRecord?: (bytes: number) => Promise<void>;
  /** Aborted when the client is gone: the store's calls for the body end at once. */
  signal?: AbortSignal;
}

/** The cap that applies to an account with `available` credits (null: no such account). */
export function uploadCap(quota: UploadQuota, available: Prisma.Decimal | null): number {
  return available !== null && available.greaterThan(0) ? quota.quotaBytes : quota.noCreditBytes;
}

/**
 * What the account's uploads other than `except` hold: every upload not erased and used by no
 * transcript (`used_at`, set by a trigger when a transcript is created from it) counts
 * `max(receivedBytes, expectedBytes)`, so a declared size counts in full from creation. Reads
 * only the unused uploads (`uploads_unused_idx`). With the account's available balance, which
 * picks the cap.
 */
function usageColumns(accountId: string, except: string) {
  return Prisma.sql`
    (SELECT COALESCE(SUM(GREATEST(o.received_bytes, COALESCE(o.expected_bytes, 0))), 0)
       FROM uploads o
      WHERE o.account_id = ${accountId} AND o.id <> ${except} AND o.erased_at IS NULL AND o.used_at IS NULL
    )::bigint AS others_held,
    (SELECT a.total - a.reserved FROM accounts a WHERE a.id = ${accountId}) AS available`;
}

interface Usage {
  others_held: bigint;
  available: Prisma.Decimal | null;
}

interface LockedUploadRow extends Usage {
  received_bytes: bigint;
  expected_bytes: bigint | null;
  sha256: string | null;
  created_at: Date;
  hash_state: Uint8Array | null;
  used_at: Date | null;
  multipart_upload_id: string | null;
}

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
    private readonly quota: UploadQuota,
  ) {}

  /**
   * Bytes the upload may grow to (from `offset`) within the account's cap: the cap less what
   * its other uploads hold and what its other writers have reserved, and never less than its
   * declared size (admitted when it was created). The error for going past it.
   */
  private room(usage: Usage, othersReserved: number, offset: number, expected: number) {
    const cap = uploadCap(this.quota, usage.available);
    const free = cap - Number(usage.others_held) - othersReserved;
    const noCredit = !(usage.available !== null && usage.available.greaterThan(0));
    const refuse = () =>
      noCredit
        ? new HarkError(
            'insufficient_balance',
            `An account with no credits available may hold at most ${cap} bytes in uploads not yet transcribed; top up first.`,
          )
        : new HarkError(
            'upload_quota_exceeded',
            `The account's uploads not yet transcribed would pass its quota of ${cap} bytes; transcribe them or let unused ones expire first.`,
          );
    return {
      bytes: Math.max(expected, free) - offset,
      declaredFits: expected === 0 || expected <= free,
      refuse,
    };
  }

  /**
   * POST: the body (possibly empty) is written under a fresh id before the row exists, so a
   * refused or interrupted body leaves no upload behind. With an `Idempotency-Key` whose create
   * is on record, the body is read, not stored, and the recorded upload answered (or 409 when
   * the request differs); see `upload-idempotency.ts`. `declaredLength`: the most bytes the body
   * can carry (its Content-Length), reserved against the account's quota while it streams. `opts.signal`: aborted when the client
   * is gone, which ends the store's calls for it at once.
   */
  async createWithBody(
    accountId: string,
    input: CreateUploadRequest,
    body: Readable,
    declaredLength: number | null,
    opts: CreateWithBodyOptions = {},
  ): Promise<UploadView> {
    if (declaredLength !== null && declaredLength > LIMITS.maxUploadRequestBytes) throw requestTooLarge();
    const key = input.idempotencyKey;
    if (key === undefined) return this.createNew(accountId, input, body, declaredLength, opts);
    // Creates under one key run one at a time, on every replica: a retry that overlaps its
    // first try waits for it and answers its upload (the first try's reservation would
    // otherwise count against the retry's quota check, and could refuse it 413).
    const keyLock = await this.holdKey(accountId, key);
    try {
      // Before the quota: the recorded upload already counts, and its replay adds nothing.
      const prior = await findUploadKey(this.db, accountId, key);
      if (prior) {
        // A replay's body, too, is dropped after `idleMs` without a byte: it holds the key.
        const idle = watchIdle(body, this.lock.idleMs);
        const print = await printBody(
          body,
          LIMITS.maxUploadRequestBytes,
          requestTooLarge,
          idle.touch,
        ).finally(idle.stop);
        return await this.get(accountId, replayOf(prior, requestHash({ ...input, ...print })));
      }
      return await this.createNew(accountId, input, body, declaredLength, opts);
    } finally {
      await keyLock.release();
    }
  }

  /** The key's lock (Redis, with the upload locks), waiting up to `STATUS_WAIT_MS` for it. */
  private async holdKey(accountId: string, key: string) {
    const lockId = `key:${accountId}:${createHash('sha256').update(key).digest('hex')}`;
    const deadline = Date.now() + STATUS_WAIT_MS;
    for (;;) {
      const held = await this.lock.acquire(lockId, accountId, 0);
      if (held) return held;
      const left = deadline - Date.now();
      if (left <= 0 || !(await this.lock.waitUntilFree(lockId, left))) {
        throw new HarkError(
          'upload_busy',
          'A create with this Idempotency-Key is still running; send it again in a moment to get its upload.',
        );
      }
    }
  }

  private async createNew(
    accountId: string,
    input: CreateUploadRequest,
    body: Readable,
    declaredLength: number | null,
    opts: CreateWithBodyOptions,
  ): Promise<UploadView> {
    const id = newId('up');
    const expected = input.expectedBytes ?? 0;
    // The fresh id is never busy: this only reserves the bytes the upload may hold.
    const reservation = await this.lock.acquire(
      id,
      accountId,
      Math.max(expected, declaredLength ?? LIMITS.maxUploadRequestBytes),
    );
    if (!reservation) throw new Error(`fresh upload id ${id} was locked`);
    let taken: KeyTaken;
    try {
      const [usage] = await this.db.$queryRaw<Usage[]>`SELECT ${usageColumns(accountId, id)}`;
      const room = this.room(usage!, reservation.othersReservedBytes, 0, expected);
      if (!room.declaredFits || (declaredLength !== null && declaredLength > room.bytes)) throw room.refuse();
      return await this.writeNew(accountId, id, input, body, room, opts);
    } catch (e) {
      if (!(e instanceof KeyTaken)) throw e;
      taken = e;
    } finally {
      await reservation.release();
    }
    // Another create under the key made its upload first (ours is removed; the key lock makes
    // this rare: a lock that expired under a stalled holder): answer that one.
    return this.get(accountId, replayOf(taken.prior, taken.hash));
  }

  private async writeNew(
    accountId: string,
    id: string,
    input: CreateUploadRequest,
    body: Readable,
    room: { bytes: number; refuse(): HarkError },
    opts: CreateWithBodyOptions,
  ): Promise<UploadView> {
    const hash = await this.hashing.start();
    // A keyed create prints its body for the key's record.
    const keyed =
      input.idempotencyKey === undefined ? null : { key: input.idempotencyKey, print: new BodyPrint() };
    // As a chunk's: a silent client would hold the reservation (and the key) for 300 s.
    const idle = watchIdle(body, this.lock.idleMs);
    try {
      // No row yet to record a multipart upload in: a crash leaves the blob to the sweeper.
      const appended = await this.blobs
        .appendAt(id, { offset: 0, uploadId: null }, body, {
          maxBytes: Math.min(LIMITS.maxUploadRequestBytes, room.bytes),
          onData: (c) => {
            idle.touch();
            keyed?.print.update(c);
            return hash.update(c);
          },
          tooLarge: room.bytes < LIMITS.maxUploadRequestBytes ? room.refuse : requestTooLarge,
          ...(opts.signal ? { signal: opts.signal } : {}),
        })
        .finally(idle.stop);
      await opts.beforeRecord?.(appended.bytes);
      const data = {
        id,
        accountId,
        expectedBytes: input.expectedBytes,
        sha256: input.sha256,
        receivedBytes: BigInt(appended.bytes),
        multipartUploadId: appended.uploadId,
        hashState: Buffer.from(await hash.save()),
      };
      if (!keyed) return uploadView(await this.db.upload.create({ data, select: SELECT }));
      const keyHash = requestHash({ ...input, ...keyed.print.finish() });
      return await this.db.$transaction(async (tx) => {
        const row = await tx.upload.create({ data, select: SELECT });
        await claimUploadKey(tx, accountId, keyed.key, keyHash, id);
        return uploadView(row);
      });
    } catch (e) {
      // Not when the row is there after all (a COMMIT whose answer was lost): a key's retry
      // answers that upload, which needs its file. Best effort: what a failed removal leaves
      // has no row, and the upload sweeper removes it; so does a store that is unavailable,
      // which would only keep the reservation (and the caller's answer) through its time-outs
      // again.
      if (!isBlobStoreUnavailable(e)) {
        const row = await this.db.upload.count({ where: { id } }).catch(() => 1);
        if (row === 0) await this.blobs.remove(id).catch(() => undefined);
      }
      throw e;
    } finally {
      hash.end();
    }
  }

  /** How long a body may go without a byte before it is dropped (`watchIdle`), within its lock's TTL. */
  get bodyIdleMs(): number {
    return this.lock.idleMs;
  }

  /**
   * The upload as stored. While a chunk is being written this waits for it (up to
   * `STATUS_WAIT_MS`, then 409 `upload_busy`, retryable): `receivedBytes` is where to resume, and
   * the length before an in-flight chunk would have a client that lost that chunk's response
   * send its bytes again, stored twice after it.
   */
  async get(accountId: string, id: string): Promise<UploadView> {
    const row = await this.find(accountId, id);
    // Read again only where a chunk was in flight when the row was read.
    if (!(await this.lock.held(id))) return uploadView(row);
    if (!(await this.lock.waitUntilFree(id, STATUS_WAIT_MS))) throw new HarkError('upload_busy');
    return uploadView(await this.find(accountId, id));
  }

  private async find(accountId: string, id: string) {
    if (!UPLOAD_ID.test(id)) throw new HarkError('upload_not_found');
    // Erased, or about to be (a transcript of it past its retention): gone for the caller.
    const row = await this.db.upload.findFirst({
      where: { id, accountId, ...liveUploadWhere() },
      select: SELECT,
    });
    if (!row) throw new HarkError('upload_not_found');
    return row;
  }

  /**
   * Appends one body. `declaredLength` (Content-Length) lets oversize bodies be refused before
   * a byte is read; bodies without it are counted as they stream. `signal`: aborted when the
   * client is gone, which ends the store's calls at once, and with them the lock and the
   * reservation (a store that hangs fails them within the client's time-outs anyway).
   */
  async append(
    accountId: string,
    id: string,
    body: Readable,
    declaredLength: number | null,
    signal?: AbortSignal,
  ): Promise<UploadView> {
    if (declaredLength !== null && declaredLength > LIMITS.maxChunkBytes)
      throw new HarkError('chunk_too_large');
    if (declaredLength === 0) throw new HarkError('chunk_empty');
    await this.find(accountId, id);
    // Reserves the most this chunk can add to the account's held bytes until it is recorded.
    const held = await this.lock.acquire(id, accountId, declaredLength ?? LIMITS.maxChunkBytes);
    if (!held) throw new HarkError('upload_busy');
    try {
      // Re-read under the lock (another writer may have finished just before we got it), with
      // what the account's other uploads hold: one round trip.
      const [row] = await this.db.$queryRaw<LockedUploadRow[]>`
        SELECT u.received_bytes, u.expected_bytes, u.sha256, u.created_at, u.hash_state, u.used_at,
               u.multipart_upload_id, ${usageColumns(accountId, id)}
        FROM uploads u
        WHERE u.id = ${id} AND u.account_id = ${accountId} AND u.erased_at IS NULL AND ${NO_EXPIRED_TRANSCRIPT}`;
      if (!row) throw new HarkError('upload_not_found');
      // A transcript reads these bytes: on every driver, no more are appended once one is created.
      if (row.used_at !== null) throw sealed();
      const current = {
        id,
        receivedBytes: row.received_bytes,
        expectedBytes: row.expected_bytes,
        sha256: row.sha256,
        createdAt: row.created_at,
      };
      const offset = Number(row.received_bytes);
      const room = LIMITS.maxUploadBytes - offset;
      if (declaredLength !== null && declaredLength > room) throw new HarkError('upload_too_large');
      const quota = this.room(row, held.othersReservedBytes, offset, Number(row.expected_bytes ?? 0));
      if (quota.bytes <= 0 || (declaredLength !== null && declaredLength > quota.bytes)) throw quota.refuse();
      const limit = Math.min(LIMITS.maxChunkBytes, room);
      const hash = await this.hashing.start(row.hash_state);
      // A client that stops sending (a connection gone without FIN or RST) is dropped after
      // `idleMs` without a byte, so its lock is free within the 30 s decisions allow.
      const idle = watchIdle(body, this.lock.idleMs);
      try {
        const appended = await this.blobs
          .appendAt(id, { offset, uploadId: row.multipart_upload_id }, body, {
            maxBytes: Math.min(limit, quota.bytes),
            onData: (c) => {
              idle.touch();
              return hash.update(c);
            },
            tooLarge: () =>
              quota.bytes < limit
                ? quota.refuse()
                : new HarkError(room < LIMITS.maxChunkBytes ? 'upload_too_large' : 'chunk_too_large'),
            // Before the store's first part goes in: a retry after a crash must find the parts.
            recordUploadId: async (uploadId) => {
              const n = await this.db.upload.updateMany({
                where: { id, receivedBytes: current.receivedBytes },
                data: { multipartUploadId: uploadId },
              });
              if (n.count !== 1) throw new Error('upload moved under its lock');
            },
            ...(signal ? { signal } : {}),
          })
          .catch(async (e: unknown) => {
            if (e instanceof BlobMissingError) throw await this.lost(id, current.receivedBytes);
            throw e instanceof BlobSealedError ? sealed() : e;
          })
          .finally(idle.stop);
        const written = appended.bytes;
        if (written === 0) throw new HarkError('chunk_empty');
        try {
          // Not once a transcript was made of the upload while this chunk streamed: it reads the
          // length it found (its create locked the row), so these bytes are refused and cut.
          const n = await this.db.upload.updateMany({
            where: { id, receivedBytes: current.receivedBytes, usedAt: null },
            data: {
              receivedBytes: BigInt(offset + written),
              multipartUploadId: appended.uploadId,
              hashState: Buffer.from(await hash.save()),
            },
          });
          if (n.count !== 1) {
            const used = await this.db.upload.count({ where: { id, usedAt: { not: null } } });
            throw used > 0 ? sealed() : new Error('upload moved under its lock');
          }
        } catch (e) {
          // The error may come after Postgres committed (a connection lost on COMMIT): drop the
          // bytes only when the row certainly still records `offset`. Whatever stays past the
          // recorded length is superseded by the next append anyway.
          if (await this.stillAt(id, current.receivedBytes))
            await this.blobs.truncate(id, offset).catch(() => undefined);
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

  /**
   * The store holds fewer bytes than the row records (a storage folder cleaned or a disk
   * replaced by hand): nothing can follow bytes that are gone and no transcript can be made of
   * them, so the upload is erased (the sweeper removes what the store still has) and reported as
   * unknown, as after any other erasure. Only while the row still records `receivedBytes`.
   */
  private async lost(id: string, receivedBytes: bigint): Promise<HarkError> {
    await this.db.upload.updateMany({
      where: { id, receivedBytes, erasedAt: null, usedAt: null },
      data: { erasedAt: new Date(), ...ERASED_UNREAD_UPLOAD },
    });
    return new HarkError(
      'upload_not_found',
      'The stored bytes of this upload are gone; send the file again as a new upload.',
    );
  }

  /** Whether the upload's row reads `receivedBytes` now; false when that cannot be known. */
  private async stillAt(id: string, receivedBytes: bigint): Promise<boolean> {
    const row = await this.db.upload
      .findUnique({ where: { id }, select: { receivedBytes: true } })
      .catch(() => undefined);
    return row !== undefined && row !== null && row.receivedBytes === receivedBytes;
  }
}
