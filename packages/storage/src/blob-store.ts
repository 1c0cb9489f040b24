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
  /**
   * Called when the append starts the blob's multipart upload (S3), before any byte goes into
   * it: the caller records the id durably (with its upload row), so that an append resumed after
   * a crash finds the parts this one stored. Without it the id is only in the result.
   */
  recordUploadId?: (uploadId: string) => Promise<void>;
  /** Aborts the store's calls at once (the request the body comes with is gone). */
  signal?: AbortSignal;
}

/** Options of the calls that only reach the store. */
export interface StoreCallOptions {
  /** Aborts the store's calls at once (the job or sweep they serve was stopped). */
  signal?: AbortSignal;
}

/** One page of `staleKeys`. */
export interface StaleKeysPage {
  /** Keys with something stored that was last written before the given time (maybe repeated). */
  keys: string[];
  /** Where the next page starts; null once the listing has reached its end. */
  next: string | null;
}

/** Where an append starts, as Postgres recorded it. */
export interface BlobPosition {
  /** The durable length (`uploads.received_bytes`). */
  offset: number;
  /**
   * The store's id for the blob while it grows (S3: its multipart upload id), as recorded
   * (`uploads.multipart_upload_id`); null when none was (always with the local driver).
   */
  uploadId: string | null;
}

/** What an append stored. */
export interface Appended {
  /** Bytes appended at the offset, durable. */
  bytes: number;
  /** The store's id for the blob to record with the new length (see `BlobPosition`). */
  uploadId: string | null;
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
   * Appends `body` at `at.offset` (the durable length recorded in Postgres) and resolves with
   * the bytes appended once they are durable. Whatever an earlier attempt left past the offset
   * (a crash before Postgres recorded it) is ignored and superseded. On any failure nothing
   * readable changes and the error is rethrown. One writer per key at a time (the caller locks).
   * Throws `BlobSealedError` once `fetchTo` has sealed the blob (S3 driver).
   */
  appendAt(
    key: string,
    at: BlobPosition,
    body: AsyncIterable<Buffer>,
    opts: AppendOptions,
  ): Promise<Appended>;
  /** Drops what an append past `length` left (used when Postgres refused to record it). */
  truncate(key: string, length: number, opts?: StoreCallOptions): Promise<void>;
  /**
   * Puts exactly the first `length` bytes of the blob at the local path `dest` (which must not
   * exist), streamed, never the whole blob in memory. May seal the blob (see `appendAt`).
   * Throws `BlobMissingError` when the blob is gone or shorter than `length`. `uploadId`: the one
   * recorded with `length` (see `BlobPosition`); the S3 driver looks it up when it is not given.
   */
  fetchTo(
    key: string,
    length: number,
    dest: string,
    opts?: { signal?: AbortSignal; uploadId?: string | null },
  ): Promise<void>;
  /** Removes everything stored under `key` (S3: also aborts its multipart upload). Idempotent. */
  remove(key: string, opts?: StoreCallOptions): Promise<void>;
  /** Whether anything is stored under `key`. */
  exists(key: string, opts?: StoreCallOptions): Promise<boolean>;
  /**
   * One page, at most about `limit` names listed, of the keys with something stored that was last
   * written before `before` (the upload sweeper removes those without an upload row: bodies of a
   * POST that never got its row, S3 multipart uploads a crash left behind), starting at `cursor`
   * (a page's `next`; null for the start). Pages follow the store's own order, so a sweep that
   * keeps the cursor between runs reaches every key however many come first. A cursor the
   * driver does not recognise starts from the beginning.
   */
  staleKeys(
    before: Date,
    page: { cursor: string | null; limit: number } & StoreCallOptions,
  ): Promise<StaleKeysPage>;
}
