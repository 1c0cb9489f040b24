import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { HarkError, LIMITS } from '@hark/core';
import type { Db, Prisma } from '@hark/db';
import { ERASED_REQUEST_HASH } from '@hark/transcripts';

/**
 * `Idempotency-Key` on POST /v1/uploads: kept 24 hours per account like the keys of POST
 * /v1/transcripts (decisions), in a key space of their own, so one key may name an upload and
 * the transcript made of it. "Same request" is the same declared size and digest and the same
 * body bytes (length and SHA-256): a replay answers the upload as it stands now; anything else
 * under the key is 409 `idempotency_conflict`.
 *
 * Creates under one key take a Redis lock in turn (`UploadService.holdKey`), so a retry that
 * overlaps its first try waits for it. The key is claimed in the transaction that creates the
 * upload's row, after its body is stored, so a create that fails or is refused (quota, a broken
 * connection) claims nothing and its retry starts afresh. Should two creates still race (a lock
 * expired under a stalled holder), the first row to commit wins and the other answers its
 * upload (its file removed).
 */
/** What identifies a create: its query, and its body as length and digest. */
export interface UploadRequestPrint {
  expectedBytes: number | null;
  sha256: string | null;
  bodyBytes: number;
  bodySha256: string;
}

export function requestHash(p: UploadRequestPrint): string {
  const canonical = JSON.stringify([p.expectedBytes, p.sha256, p.bodyBytes, p.bodySha256]);
  return createHash('sha256').update(canonical).digest('hex');
}

/** A running length and SHA-256 of a body as it streams. */
export class BodyPrint {
  private readonly hash = createHash('sha256');
  /** Bytes seen so far. */
  bytes = 0;
  update(chunk: Uint8Array): void {
    this.hash.update(chunk);
    this.bytes += chunk.byteLength;
  }
  finish(): { bodyBytes: number; bodySha256: string } {
    return { bodyBytes: this.bytes, bodySha256: this.hash.digest('hex') };
  }
}

/**
 * Reads a replayed body to its end (at most `maxBytes`, else `tooLarge()`), storing nothing:
 * its length and digest, to compare with the first request's. `onChunk` is called as each piece arrives.
 */
export async function printBody(
  body: Readable,
  maxBytes: number,
  tooLarge: () => Error,
  onChunk: () => void = () => undefined,
): Promise<{ bodyBytes: number; bodySha256: string }> {
  const print = new BodyPrint();
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    onChunk();
    print.update(chunk);
    if (print.bytes > maxBytes) {
      body.destroy();
      throw tooLarge();
    }
  }
  return print.finish();
}

export interface UploadKeyRecord {
  requestHash: string;
  uploadId: string;
}

/** The key's record while it is live (within its 24 hours), or null. */
export async function findUploadKey(db: Db, accountId: string, key: string): Promise<UploadKeyRecord | null> {
  return db.uploadIdempotencyRecord.findFirst({
    where: { accountId, key, expiresAt: { gt: new Date() } },
    select: { requestHash: true, uploadId: true },
  });
}

/** Another create claimed the key first (thrown inside the transaction, so it rolls back). */
export class KeyTaken extends Error {
  /** `prior`: the live record; `hash`: the losing request's own. */
  constructor(
    readonly prior: UploadKeyRecord,
    readonly hash: string,
  ) {
    super('idempotency key claimed by another create');
  }
}

/**
 * Claims `key` for the upload row just created in `tx` (same transaction), replacing an expired
 * record; throws `KeyTaken` with the live record when another create holds it. Waits, through
 * the primary key, for a racing create's transaction to end.
 */
export async function claimUploadKey(
  tx: Prisma.TransactionClient,
  accountId: string,
  key: string,
  hash: string,
  uploadId: string,
): Promise<void> {
  await tx.uploadIdempotencyRecord.deleteMany({ where: { accountId, key, expiresAt: { lte: new Date() } } });
  // Twice at most: a record that conflicted may be gone before it is read (its upload swept).
  for (let attempt = 0; attempt < 2; attempt++) {
    const inserted = await tx.$executeRaw`
      INSERT INTO upload_idempotency_records (account_id, key, request_hash, upload_id, expires_at)
      VALUES (${accountId}, ${key}, ${hash}, ${uploadId}, ${new Date(Date.now() + LIMITS.idempotencyKeyTtlMs)})
      ON CONFLICT (account_id, key) DO NOTHING`;
    if (inserted === 1) return;
    const prior = await tx.uploadIdempotencyRecord.findUnique({
      where: { accountId_key: { accountId, key } },
      select: { requestHash: true, uploadId: true },
    });
    if (prior) throw new KeyTaken(prior, hash);
  }
  throw new Error('upload idempotency key neither claimed nor held');
}

/**
 * The prior upload's id when `hash` is the request that claimed the key; 409 otherwise. Once the
 * upload is erased its fingerprint is gone (`ERASED_REQUEST_HASH`): every request under the key
 * is 404 `upload_not_found`, as a replay of it was, until the key's 24 hours pass.
 */
export function replayOf(prior: UploadKeyRecord, hash: string): string {
  if (prior.requestHash === ERASED_REQUEST_HASH) throw new HarkError('upload_not_found');
  if (prior.requestHash !== hash) throw new HarkError('idempotency_conflict');
  return prior.uploadId;
}
