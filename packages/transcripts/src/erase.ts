import { Prisma } from '@hark/db';
import { forgetUploadDigests } from './upload-readers';

/**
 * What an idempotency record's `request_hash` (a fingerprint of the caller's request: for an
 * upload, of its bytes) becomes once its upload or transcript is erased: the database sets it
 * (triggers in the migration `idempotency_forget_erased`, whichever code erases). The record
 * stays, so a replay under the key still finds it, and is answered 404 whatever its body: there
 * is nothing left to tell the first request's body from another.
 */
export const ERASED_REQUEST_HASH = 'erased';

/**
 * The erasure a deletion (API) and the retention sweep (worker) share, inside the caller's
 * transaction, with the transcript row already locked and found erasable (not processing, not
 * erased yet). Everything the caller gave or the transcription produced goes:
 * - the content row (text, words, utterances, diarization, segments);
 * - on the row: `glossary`, `url` (an audio URL can carry presigned credentials), `webhookUrl`
 *   (often a token), `metadata`, `externalId`, `prompt` (OpenAI route), `errorMessage`, and
 *   `audioSha256` (only `reuseIfIdentical` reads it, and never for an erased transcript);
 * - on its delivery records: `responsePreview`, and `url` cut to its origin (see `urlOrigin`).
 * What usage and billing need stays: id, account, key, status, error code, duration, rate,
 * cost, model, the timestamps, the usage record and ledger. `deletedAt` is set to `now`.
 *
 * The key records of both lose their fingerprint of the request (`ERASED_REQUEST_HASH`, set by
 * the database).
 *
 * The upload is marked erased (`erasedAt`, its hash state dropped), which ends every new use of
 * it, and its digests go unless a processing transcript reads it (`forgetUploadDigests`). Its
 * bytes are the caller's to remove after the commit, and only once no processing transcript reads
 * them (`uploadStillRead`); otherwise the upload sweeper removes them, and the digests, later.
 * Returns the upload's id, if any.
 */
export async function eraseTranscript(
  tx: Prisma.TransactionClient,
  id: string,
  uploadId: string | null,
  now: Date,
): Promise<string | null> {
  await tx.transcriptContent.deleteMany({ where: { transcriptId: id } });
  await tx.transcript.update({
    where: { id },
    data: {
      deletedAt: now,
      glossary: Prisma.DbNull,
      url: null,
      webhookUrl: null,
      metadata: Prisma.DbNull,
      externalId: null,
      prompt: null,
      errorMessage: null,
      audioSha256: null,
    },
  });
  await redactDeliveries(tx, id);
  if (uploadId) {
    // Set again when a sibling erased it before: the upload sweeper re-checks erased uploads
    // for a leftover file for a while after `erasedAt`.
    await tx.upload.updateMany({ where: { id: uploadId }, data: { erasedAt: now, hashState: null } });
    // A statement of its own, after the row lock above: a create of a transcript of the upload
    // that held the lock has committed by now, and this sees it as a reader.
    await forgetUploadDigests(tx, [uploadId]);
  }
  return uploadId;
}

/**
 * The delivery records of an erased transcript: no response preview (a receiver may echo the
 * body: metadata, externalId, url), and the URL cut to its origin. `url` is NOT NULL and the
 * record stays as the operator's trace of where notices went; the path and query, where tokens
 * live, are the caller's.
 */
export async function redactDeliveries(tx: Prisma.TransactionClient, transcriptId: string): Promise<void> {
  const urls = await tx.webhookDelivery.findMany({
    where: { transcriptId },
    select: { url: true },
    distinct: ['url'],
  });
  for (const { url } of urls) {
    await tx.webhookDelivery.updateMany({
      where: { transcriptId, url },
      data: { url: urlOrigin(url), responsePreview: null },
    });
  }
}

/**
 * `scheme://host[:port]` of a URL: no user information, path, query or fragment. An unparsable
 * value (never stored: URLs are checked at create) becomes the empty string.
 */
export function urlOrigin(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '';
  }
}
