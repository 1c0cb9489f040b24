import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '@hark/db';
import { DownloadError, type GuardedClient, downloadToFile } from '@hark/http';
import { BlobMissingError, type BlobStore, ResumableSha256 } from '@hark/storage';
import { failure } from './failures';
import type { ScratchBudget } from './scratch/scratch-budget';

export interface AudioSourceDeps {
  db: Db;
  blobs: BlobStore;
  /** Guarded got client (public addresses only unless ALLOW_PRIVATE_URLS). */
  http: GuardedClient;
  maxDownloadBytes: number;
  /**
   * Whether the store copies an upload into the job's folder (S3: its bytes count against the
   * scratch budget before they are fetched); the local store links it, and only a copy it makes
   * of a longer file counts, once made.
   */
  copiesUploads: boolean;
}

export interface AudioRef {
  url: string | null;
  uploadId: string | null;
}

/**
 * Puts the transcript's audio in a local file and returns its path: a `url` is streamed into
 * `workDir` (size-capped); an upload is fetched from the blob store into `workDir` (the local
 * driver links its file, the S3 driver streams exactly the recorded bytes down with a ranged
 * GET), and its declared sha256 is checked. The job removes `workDir` when it ends. A copy
 * counts against `budget`: a download stops where it would pass it. Throws TranscriptFailure
 * (`audio_unreachable`, `audio_too_large`, `audio_mismatch`, `audio_invalid`), the abort reason,
 * or the store's error (transient: the job is retried).
 *
 * Either way the tools are handed `<workDir>/source`, never a path in the blob store. ffmpeg
 * resolves a relative name inside an input against the input's own path (not a link's target),
 * and the local blob store keeps every account's uploads side by side in one folder, where
 * `up_<id>` named by an ffconcat list was someone else's audio. In the job's folder a bare name
 * can only be this job's own files. Names that climb out (`../`) or are absolute are not stopped
 * by this: the demuxer allow-list in @hark/media is what keeps ffmpeg from opening any name found
 * in an input at all; this is the second wall.
 */
export async function fetchAudio(
  deps: AudioSourceDeps,
  ref: AudioRef,
  workDir: string,
  signal: AbortSignal,
  budget: ScratchBudget,
): Promise<string> {
  if (ref.url !== null) return download(deps, ref.url, workDir, signal, budget);
  if (ref.uploadId !== null) return uploadFile(deps, ref.uploadId, workDir, signal, budget);
  throw failure('audio_invalid', false, 'The transcript has neither a url nor an upload.');
}

/** The URL's body, up to the spec's limit or what the budget leaves, whichever is less. */
async function download(
  deps: AudioSourceDeps,
  url: string,
  workDir: string,
  signal: AbortSignal,
  budget: ScratchBudget,
): Promise<string> {
  const dest = path.join(workDir, SOURCE_NAME);
  const maxBytes = Math.min(deps.maxDownloadBytes, budget.left);
  try {
    budget.take((await downloadToFile(deps.http, url, dest, { maxBytes, signal })).bytes);
  } catch (e) {
    const budgetBound = maxBytes < deps.maxDownloadBytes;
    if (budgetBound && e instanceof DownloadError && e.reason === 'too_large') throw budget.exceeded();
    throw e;
  }
  return dest;
}

/** The input's name in the job's private folder. */
const SOURCE_NAME = 'source';

const GONE = 'The uploaded audio is no longer available.';

async function uploadFile(
  deps: AudioSourceDeps,
  uploadId: string,
  workDir: string,
  signal: AbortSignal,
  budget: ScratchBudget,
): Promise<string> {
  const upload = await deps.db.upload.findUnique({
    where: { id: uploadId },
    select: {
      receivedBytes: true,
      multipartUploadId: true,
      sha256: true,
      hashState: true,
      actualSha256: true,
    },
  });
  // Swept. An erased upload (another transcript of it was deleted or expired) keeps its bytes
  // while a transcript made from it is still processing, as this one is: read them if they are
  // still there (a missing blob fails below).
  if (!upload) throw failure('audio_invalid', false, GONE);
  const length = Number(upload.receivedBytes);
  const source = path.join(workDir, SOURCE_NAME);
  if (deps.copiesUploads) budget.take(length);
  try {
    // Only the recorded bytes: an API process that died mid-chunk may have left more.
    await deps.blobs.fetchTo(uploadId, length, source, { signal, uploadId: upload.multipartUploadId });
  } catch (e) {
    if (!(e instanceof BlobMissingError)) throw e;
    throw failure(
      'audio_invalid',
      false,
      e.reason === 'missing' ? GONE : 'The uploaded audio is incomplete.',
    );
  }
  // The local store copies only the recorded part of a longer file; a link takes no space.
  if (!deps.copiesUploads) {
    const made = await lstat(source);
    if (!made.isSymbolicLink()) budget.take(made.size);
  }
  if (upload.sha256) {
    const actual = upload.actualSha256 ?? (await storedDigest(source, upload.hashState));
    if (actual !== upload.sha256) throw failure('audio_mismatch');
  }
  return source;
}

/**
 * The digest of the recorded bytes from the running hash state the API saved with each chunk
 * (no re-read of a 2 GiB file); a re-read of the fetched copy only when no state was saved.
 */
async function storedDigest(source: string, hashState: Uint8Array | null) {
  if (hashState && hashState.length > 0) return (await ResumableSha256.start(hashState)).digestHex();
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(source)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
