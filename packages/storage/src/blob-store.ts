/** Options of one append. */
export interface AppendOptions {
  /** The most bytes this body may carry; one more and `tooLarge()` is thrown. */
  maxBytes: number;
  /**
   * Sees every chunk before it is stored (incremental hashing); when it returns a promise,
   * reading waits for it (backpressure).
   */
  onData?: (chunk: Buffer) => void | Promise<void>;
  tooLarge: () => Error;
}

/**
 * Where upload bytes live. The API appends, workers fetch, sweepers remove. Postgres holds the
 * durable length of each blob (`uploads.received_bytes`); the store may hold more after a crash
 * and must behave as if it did not.
 *
 * Drivers: `LocalBlobStore` (a directory every process shares) and `S3BlobStore` (an
 * S3-compatible bucket; nothing shared on disk). Both pass `test/blob-store.contract.ts`.
 */
export interface BlobStore {
  /**
   * Appends `body` at byte `offset` (the durable length recorded in Postgres) and resolves with
   * the bytes appended once they are durable. Whatever an earlier attempt left past `offset`
   * (a crash before Postgres recorded it) is ignored and superseded. On any failure nothing
   * readable changes and the error is rethrown. One writer per key at a time (the caller locks).
   * Throws `BlobSealedError` once `fetchTo` has sealed the blob (S3 driver).
   */
  appendAt(key: string, offset: number, body: AsyncIterable<Buffer>, opts: AppendOptions): Promise<number>;
  /** Drops what an append past `length` left (used when Postgres refused to record it). */
  truncate(key: string, length: number): Promise<void>;
  /**
   * Puts exactly the first `length` bytes of the blob at the local path `dest` (which must not
   * exist), streamed, never the whole blob in memory. May seal the blob (see `appendAt`).
   * Throws `BlobMissingError` when the blob is gone or shorter than `length`.
   */
  fetchTo(key: string, length: number, dest: string, opts?: { signal?: AbortSignal }): Promise<void>;
  /** Removes everything stored under `key` (S3: also aborts its multipart upload). Idempotent. */
  remove(key: string): Promise<void>;
  /** Whether anything is stored under `key`. */
  exists(key: string): Promise<boolean>;
  /**
   * Keys with something stored that was last written before `before` (the upload sweeper
   * removes those without an upload row: bodies of a POST that never got its row, S3 multipart
   * uploads a crash left behind). May yield a key more than once.
   */
  staleKeys(before: Date): AsyncIterable<string>;
}
