import { S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { BlobStoreUnavailableError } from './blob-errors';

/** How to reach the bucket. Credentials are not here: the SDK reads the usual AWS variables. */
export interface S3Settings {
  bucket: string;
  /** Prepended to every object name, e.g. `hark/uploads/`. Default ''. */
  prefix: string;
  region: string;
  /** An S3-compatible server (MinIO, S3Proxy, R2...); unset for AWS itself. */
  endpoint?: string;
  /** `bucket` in the path instead of the host name (most S3-compatible servers). */
  forcePathStyle: boolean;
}

/**
 * The SDK client. Checksums only where S3 requires them: the SDK's default trailing CRC32 on
 * every upload is not understood by every S3-compatible server, and the API hashes uploads
 * itself (SHA-256, checked against what the client declared).
 */
export function createS3Client(s: S3Settings): S3Client {
  return new S3Client({
    region: s.region,
    ...(s.endpoint ? { endpoint: s.endpoint } : {}),
    forcePathStyle: s.forcePathStyle,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

const TRANSIENT_NAMES = new Set([
  'SlowDown',
  'ServiceUnavailable',
  'InternalError',
  'RequestTimeout',
  'TimeoutError',
]);

/**
 * Whether an SDK failure is worth retrying later: the server's fault (5xx, throttling) or no
 * answer at all (connection refused or reset, time-out: anything the SDK throws that is not a
 * service exception). A client fault (access denied, no such
 * bucket) is a configuration problem and stays as it is.
 */
export function isTransientS3Error(e: unknown): boolean {
  if (e instanceof S3ServiceException) {
    const status = e.$metadata?.httpStatusCode ?? 0;
    return e.$fault === 'server' || status >= 500 || status === 429 || TRANSIENT_NAMES.has(e.name);
  }
  // No answer at all: the socket's error (which may come from another realm, jest's sandbox,
  // and then reaches us wrapped by the SDK's retry layer: no instanceof, no code to read).
  // Missing credentials and an aborted call are not the store's fault.
  if (typeof e !== 'object' || e === null) return false;
  const name = (e as { name?: unknown }).name;
  return name !== 'AbortError' && name !== 'CredentialsProviderError';
}

/** A 404 (NoSuchKey, NotFound, NoSuchUpload). */
export function isNotFound(e: unknown): boolean {
  return (
    e instanceof S3ServiceException &&
    (e.$metadata?.httpStatusCode === 404 || /^(NoSuchKey|NotFound|NoSuchUpload)$/.test(e.name))
  );
}

/** Runs one S3 call; a transient failure becomes `BlobStoreUnavailableError` (no address, no key). */
export async function s3Call<T>(operation: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (isTransientS3Error(e)) throw new BlobStoreUnavailableError(operation, e);
    throw e;
  }
}
