// @ts-check
// Resumable upload through the API's own endpoints: POST /v1/uploads (declaring the size, under
// an Idempotency-Key, tried again while the failure is transient), then PUT chunks in order;
// after a failed chunk, GET /v1/uploads/{id} says where to go on from. Then the transcript's
// create, retried under an Idempotency-Key, reusing the upload across clicks.
import { ApiError, Retries, pause } from './api.js';

/** The API's largest chunk (api-spec: PUT /v1/uploads/{id}, 16 MiB). */
export const CHUNK_BYTES = 16 * 1024 * 1024;
/** The first chunk: 1 MiB takes 20 s at 50 KB/s, well inside the API's 300 s request time-out. */
export const FIRST_CHUNK_BYTES = 1024 * 1024;
/** What each chunk is sized to take, from the rate of the one before. */
const TARGET_MS = 30_000;
const MIN_CHUNK_BYTES = 64 * 1024;

/**
 * The next chunk's size: the last one's rate times {@link TARGET_MS}, at most 4 times its size
 * and at most `max`. A chunk the API does not receive in full within its request time-out is
 * not stored, so fixed 16 MiB chunks never finished on a link under about 56 KB/s.
 * @param {number} bytes the last chunk's size  @param {number} ms how long it took
 * @param {number} current  @param {number} max
 */
export function nextChunkBytes(bytes, ms, current, max) {
  const fitting = Math.floor((bytes / Math.max(ms, 1)) * TARGET_MS);
  return Math.min(max, current * 4, Math.max(Math.min(max, MIN_CHUNK_BYTES), fitting));
}

/**
 * A random Idempotency-Key from `crypto.getRandomValues`, which (unlike `crypto.randomUUID`)
 * pages served over plain http on a LAN address have too.
 */
export function randomKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * `request()` tried again while its failure is transient (no answer, a 5xx, `retryable`), with
 * the waits `retries` gives; a refusal is thrown at once, and an abort of `signal` ends it with
 * its reason. Only for requests a repeat cannot duplicate (creates under an Idempotency-Key).
 * @template T
 * @param {() => Promise<T>} request  @param {Retries} retries
 * @param {((err: ApiError, attempt: number) => void) | undefined} onRetry
 * @param {AbortSignal} [signal]
 * @returns {Promise<T>}
 */
async function retried(request, retries, onRetry, signal) {
  for (;;) {
    try {
      const out = await request();
      retries.succeeded();
      return out;
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      const wait = retries.next(err);
      if (wait === null) throw err;
      onRetry?.(/** @type {ApiError} */ (err), retries.attempts);
      await pause(wait, signal);
    }
  }
}

/**
 * Uploads `file` and resolves with the upload id once the server holds every byte. The declared
 * `expectedBytes` makes the API refuse a transcript of an upload whose length came out wrong.
 * @param {import('./api.js').HarkClient} client
 * @param {Blob} file
 * @param {{chunkBytes?: number, maxAttempts?: number, onProgress?: (sent: number, total: number) => void,
 *   onRetry?: (err: ApiError, attempt: number) => void, idempotencyKey?: string, signal?: AbortSignal}} [opts]
 *   `chunkBytes` the most per PUT (default {@link CHUNK_BYTES}; chunks start at
 *   {@link FIRST_CHUNK_BYTES} and are sized to the link); `maxAttempts` (default 6) consecutive failures
 *   before giving up, with 0.5 s, 1 s, 2 s... between them (never less than `Retry-After`;
 *   `rate_limited` is waited out apart, see {@link Retries}); `idempotencyKey` the create's (default:
 *   random): the same key again within 24 hours answers the upload made under it, as it stands,
 *   and the upload goes on from its `receivedBytes`; `signal` stops the upload (the promise
 *   rejects with its reason), a chunk in flight included.
 * @returns {Promise<string>}
 */
export async function uploadFile(client, file, opts = {}) {
  const maxChunk = opts.chunkBytes ?? CHUNK_BYTES;
  let chunkBytes = Math.min(maxChunk, FIRST_CHUNK_BYTES);
  const maxAttempts = opts.maxAttempts ?? 6;
  const progress = opts.onProgress ?? (() => {});
  const retries = new Retries(maxAttempts);
  const signal = opts.signal;
  const key = opts.idempotencyKey ?? `try-up-${randomKey()}`;
  // One key for every try: a try whose answer was lost made the upload, and the next answers
  // it instead of making a second that would hold its declared size of the quota for a day.
  const headers = { 'Idempotency-Key': key };
  const upload = await retried(
    () => client.request('POST', `/uploads?expectedBytes=${file.size}`, { headers, signal }),
    retries,
    opts.onRetry,
    signal,
  );
  const id = String(upload.id);
  const start = Number(upload.receivedBytes);
  progress(start, file.size);
  /** What the server holds; null after a failure, until it has told us again. */
  let offset = /** @type {number | null} */ (start);
  while (offset === null || offset < file.size) {
    try {
      signal?.throwIfAborted();
      if (offset === null) {
        offset = Number(
          (await client.request('GET', `/uploads/${encodeURIComponent(id)}`, { signal })).receivedBytes,
        );
        progress(offset, file.size);
        continue;
      }
      const from = offset;
      const end = Math.min(from + chunkBytes, file.size);
      const sentAt = Date.now();
      const after = await client.putChunk(
        id,
        file.slice(from, end),
        (sent) => progress(from + Math.min(sent, end - from), file.size),
        signal,
      );
      chunkBytes = nextChunkBytes(end - from, Date.now() - sentAt, chunkBytes, maxChunk);
      offset = Number(after.receivedBytes);
      retries.succeeded();
      progress(offset, file.size);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      const wait = retries.next(err);
      if (wait === null) throw err;
      // Cut off or not received in time: the link may be slower than the chunk assumed.
      const e = /** @type {ApiError} */ (err);
      if (e.status === 0 || e.status === 408)
        chunkBytes = Math.max(Math.min(maxChunk, MIN_CHUNK_BYTES), Math.floor(chunkBytes / 2));
      opts.onRetry?.(e, retries.attempts);
      offset = null; // the chunk may have landed with its answer lost: ask the server
      await pause(wait, signal);
    }
  }
  return id;
}

/**
 * POST /v1/transcripts under `idempotencyKey`, tried again while the failure is transient
 * (no answer, a 5xx, `retryable`): the key makes a create whose answer was lost come back as the
 * same transcript instead of a second, charged one. A refusal (400 `validation`, 402...) is
 * thrown at once.
 * @param {import('./api.js').HarkClient} client
 * @param {Record<string, unknown>} json the request body
 * @param {string} idempotencyKey
 * @param {{maxAttempts?: number, onRetry?: (err: ApiError, attempt: number) => void}} [opts]
 * @returns {Promise<any>} the transcript
 */
export async function createTranscript(client, json, idempotencyKey, opts = {}) {
  const headers = { 'Idempotency-Key': idempotencyKey };
  return retried(
    () => client.request('POST', '/transcripts', { json, headers }),
    new Retries(opts.maxAttempts ?? 6),
    opts.onRetry,
  );
}

/** How many files' unfinished uploads a page remembers. */
export const UNFINISHED_KEPT = 8;

/**
 * The same file chosen again (the input's File objects differ each time; these do not): its
 * upload is used again.
 * @param {Blob} file
 */
function fileIdentity(file) {
  const f = /** @type {Partial<File>} */ (file);
  return JSON.stringify([f.name ?? null, file.size, f.lastModified ?? null, file.type]);
}

/**
 * @typedef {object} Kept what the page keeps of the chosen file between clicks
 * @property {string} file its {@link fileIdentity}
 * @property {string} uploadId
 * @property {number} keys how many idempotency keys were made for this upload
 * @property {{body: string, key: string} | null} pending the create not known to have succeeded
 */

/**
 * Upload, then create, across clicks of the page's Start button. The upload is kept while the
 * same file stays chosen, so a failed create does not send the file again. The create's
 * Idempotency-Key comes from the upload (api-spec: POST /v1/transcripts rule 3), `try-<uploadId>`,
 * and is kept, with its body, until a create with it succeeds:
 * - a click after a failure with the same options sends the same key and body: a create that did
 *   happen (its answer lost) returns that transcript, not a second, charged one;
 * - the options changed: a new key (`try-<uploadId>-<n>`). The same key with another body is
 *   409 `idempotency_conflict`, and the user asked for something else anyway. (A hash of the
 *   options in the key would do the same, but would also hand back an old transcript for
 *   options set back to earlier ones.)
 * - a click after a success: a new key, as the user asks for a new transcript.
 */
export class Transcriber {
  /** @param {import('./api.js').HarkClient} client */
  constructor(client) {
    this.client = client;
    /** @type {Kept | null} */
    this.kept = null;
    /**
     * Uploads not yet complete (failed or stopped), by file identity: their create's
     * Idempotency-Key, so the next click with that file gets its upload back and goes on from
     * its `receivedBytes` (the last {@link UNFINISHED_KEPT} files).
     * @type {Map<string, string>}
     */
    this.unfinished = new Map();
  }

  /**
   * Uploads `file` (unless its upload is kept; an upload that failed or was stopped goes on
   * where it stood) and creates its transcript with `options`. `signal` stops the upload only:
   * a create once sent may have made (and charged) the transcript, which Cancel then stops.
   * @param {Blob} file
   * @param {Record<string, unknown>} options the create's fields besides `uploadId`
   * @param {Parameters<typeof uploadFile>[2] & {onCreateRetry?: (err: ApiError, attempt: number) => void,
   *   onUploaded?: () => void}} [opts] `onUploaded` once the API holds the whole file
   * @returns {Promise<any>} the created transcript
   */
  async start(file, options, opts = {}) {
    const identity = fileIdentity(file);
    if (this.kept?.file !== identity) this.kept = null;
    const reused = this.kept !== null;
    if (this.kept) {
      opts.onProgress?.(file.size, file.size);
      opts.onUploaded?.();
    }
    const uploaded = async () => {
      const kept = await this.upload(file, identity, opts);
      opts.onUploaded?.();
      return kept;
    };
    try {
      return await this.create(this.kept ?? (await uploaded()), options, opts);
    } catch (err) {
      // The kept upload is gone (expired, or swept unused): upload the file again, once.
      if (!(reused && err instanceof ApiError && err.code === 'upload_not_found')) throw err;
      this.kept = null;
      return this.create(await uploaded(), options, opts);
    }
  }

  /**
   * @param {Blob} file
   * @param {string} identity
   * @param {Parameters<typeof uploadFile>[2]} opts
   */
  async upload(file, identity, opts) {
    const prior = this.unfinished.get(identity);
    const fresh = () => {
      const key = `try-up-${randomKey()}`;
      this.unfinished.delete(identity);
      this.unfinished.set(identity, key);
      // The oldest beyond the last few files are forgotten (their uploads expire unused).
      for (const old of this.unfinished.keys()) {
        if (this.unfinished.size <= UNFINISHED_KEPT) break;
        this.unfinished.delete(old);
      }
      return key;
    };
    const send = (/** @type {string} */ key) =>
      uploadFile(this.client, file, { ...opts, idempotencyKey: key });
    let uploadId;
    try {
      uploadId = await send(prior ?? fresh());
    } catch (err) {
      // The unfinished upload is gone (expired unused, or erased): a new one, once.
      if (!(prior && err instanceof ApiError && err.code === 'upload_not_found')) throw err;
      uploadId = await send(fresh());
    }
    this.unfinished.delete(identity);
    this.kept = { file: identity, uploadId, keys: 0, pending: null };
    return this.kept;
  }

  /**
   * @param {Kept} kept
   * @param {Record<string, unknown>} options
   * @param {{maxAttempts?: number, onCreateRetry?: (err: ApiError, attempt: number) => void}} opts
   */
  async create(kept, options, opts) {
    const json = { uploadId: kept.uploadId, ...options };
    const body = JSON.stringify(json);
    if (kept.pending?.body !== body) {
      const n = kept.keys++;
      // At most 4 + 36 (an upload id) + a few: within the API's 64 characters.
      kept.pending = { body, key: n === 0 ? `try-${kept.uploadId}` : `try-${kept.uploadId}-${n}` };
    }
    const created = await createTranscript(this.client, json, kept.pending.key, {
      maxAttempts: opts.maxAttempts,
      onRetry: opts.onCreateRetry,
    });
    kept.pending = null;
    return created;
  }
}
