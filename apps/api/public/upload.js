// @ts-check
// Resumable upload through the API's own endpoints: POST /v1/uploads (declaring the size), then
// PUT chunks in order; after a failed chunk, GET /v1/uploads/{id} says where to go on from.
import { ApiError } from './api.js';

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

/** @param {number} ms */
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Whether sending again can succeed: no answer, a 5xx, or an error the API marks retryable
 * (`upload_busy` while the previous writer's lock lasts, `rate_limited`).
 * @param {unknown} err
 */
function transient(err) {
  return err instanceof ApiError && (err.status === 0 || err.status >= 500 || err.retryable);
}

/**
 * Uploads `file` and resolves with the upload id once the server holds every byte. The declared
 * `expectedBytes` makes the API refuse a transcript of an upload whose length came out wrong.
 * @param {import('./api.js').HarkClient} client
 * @param {Blob} file
 * @param {{chunkBytes?: number, maxAttempts?: number, onProgress?: (sent: number, total: number) => void,
 *   onRetry?: (err: ApiError, attempt: number) => void}} [opts]
 *   `chunkBytes` the most per PUT (default {@link CHUNK_BYTES}; chunks start at
 *   {@link FIRST_CHUNK_BYTES} and are sized to the link); `maxAttempts` (default 6) consecutive failures
 *   before giving up, with 0.5 s, 1 s, 2 s... between them.
 * @returns {Promise<string>}
 */
export async function uploadFile(client, file, opts = {}) {
  const maxChunk = opts.chunkBytes ?? CHUNK_BYTES;
  let chunkBytes = Math.min(maxChunk, FIRST_CHUNK_BYTES);
  const maxAttempts = opts.maxAttempts ?? 6;
  const progress = opts.onProgress ?? (() => {});
  const upload = await client.request('POST', `/uploads?expectedBytes=${file.size}`);
  const id = String(upload.id);
  const start = Number(upload.receivedBytes);
  progress(start, file.size);
  /** What the server holds; null after a failure, until it has told us again. */
  let offset = /** @type {number | null} */ (start);
  let failures = 0;
  while (offset === null || offset < file.size) {
    try {
      if (offset === null) {
        offset = Number((await client.request('GET', `/uploads/${encodeURIComponent(id)}`)).receivedBytes);
        progress(offset, file.size);
        continue;
      }
      const from = offset;
      const end = Math.min(from + chunkBytes, file.size);
      const sentAt = Date.now();
      const after = await client.putChunk(id, file.slice(from, end), (sent) =>
        progress(from + Math.min(sent, end - from), file.size),
      );
      chunkBytes = nextChunkBytes(end - from, Date.now() - sentAt, chunkBytes, maxChunk);
      offset = Number(after.receivedBytes);
      failures = 0;
      progress(offset, file.size);
    } catch (err) {
      failures += 1;
      if (!transient(err) || failures >= maxAttempts) throw err;
      // Cut off or not received in time: the link may be slower than the chunk assumed.
      const e = /** @type {ApiError} */ (err);
      if (e.status === 0 || e.status === 408)
        chunkBytes = Math.max(Math.min(maxChunk, MIN_CHUNK_BYTES), Math.floor(chunkBytes / 2));
      opts.onRetry?.(e, failures);
      offset = null; // the chunk may have landed with its answer lost: ask the server
      await pause(500 * 2 ** (failures - 1));
    }
  }
  return id;
}
