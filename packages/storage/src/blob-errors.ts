/**
 * What a blob store can report besides success. Messages never carry credentials or store
 * addresses: they may reach logs, and their class (not their text) decides what a client sees.
 */

/** The blob holds fewer bytes than asked for, or nothing at all (removed, never written). */
export class BlobMissingError extends Error {
  constructor(
    readonly key: string,
    readonly reason: 'missing' | 'short',
  ) {
    super(reason === 'missing' ? `blob ${key} is missing` : `blob ${key} holds fewer bytes than recorded`);
    this.name = 'BlobMissingError';
  }
}

/** The blob was sealed for reading (S3: its multipart upload completed) and takes no more bytes. */
export class BlobSealedError extends Error {
  constructor(readonly key: string) {
    super(`blob ${key} is sealed and takes no more bytes`);
    this.name = 'BlobSealedError';
  }
}

/**
 * The store could not be reached or answered with a transient failure (network error, 5xx,
 * throttling) after the client's own retries. Repeating the operation later may succeed.
 */
export class BlobStoreUnavailableError extends Error {
  constructor(operation: string, cause: unknown) {
    super(`object store unavailable during ${operation}`, { cause });
    this.name = 'BlobStoreUnavailableError';
  }
}

export function isBlobStoreUnavailable(e: unknown): e is BlobStoreUnavailableError {
  return e instanceof BlobStoreUnavailableError;
}
