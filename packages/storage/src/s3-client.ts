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
  /** How long a connection to the store may take to open. Default `S3_CONNECT_TIMEOUT_MS`. */
  connectTimeoutMs?: number;
  /**
   * How long one request may wait for the store's answer (its body sent, the headers back), and
   * how long a body being read may go without a byte. Default `S3_REQUEST_TIMEOUT_MS`.
   */
  requestTimeoutMs?: number;
}

/** Default connect time-out (`HARK_S3_CONNECT_TIMEOUT_MS`). */
export const S3_CONNECT_TIMEOUT_MS = 5_000;
/**
 * Default request time-out (`HARK_S3_REQUEST_TIMEOUT_MS`): a 5 MiB part sent at 200 kB/s still
 * fits. The SDK makes up to 3 attempts of a call that timed out, so a store that accepts
 * connections and never answers fails a call as unavailable after about three times this.
 */
export const S3_REQUEST_TIMEOUT_MS = 30_000;

/**
 * The SDK client. Checksums only where S3 requires them: the SDK's default trailing CRC32 on
 * every upload is not understood by every S3-compatible server, and the API hashes uploads
 * itself (SHA-256, checked against what the client declared).
 *
 * Time-outs: the SDK sets none, so a store that accepted the connection and never answered held
 * a call for ever (an append's upload lock, a worker's job slot, a sweep). Here the connection
 * has `connectTimeoutMs`, each request `requestTimeoutMs` until the store answers, and a body
 * being read (a GET streaming an object) the same without a byte: a `TimeoutError`, which the
 * SDK retries and `s3Call` reports as unavailable.
 */
export function createS3Client(s: S3Settings): S3Client {
  const requestTimeout = s.requestTimeoutMs ?? S3_REQUEST_TIMEOUT_MS;
  return new S3Client({
    region: s.region,
    ...(s.endpoint ? { endpoint: s.endpoint } : {}),
    forcePathStyle: s.forcePathStyle,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: {
      connectionTimeout: s.connectTimeoutMs ?? S3_CONNECT_TIMEOUT_MS,
      requestTimeout,
      throwOnRequestTimeout: true,
      socketTimeout: requestTimeout,
    },
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

/** What `s3Call` hands the SDK's `send` (its abort signal, when the call has one). */
export type S3SendOptions = { abortSignal?: AbortSignal };

/**
 * Runs one S3 call (`run` passes `send` the options it is given); a transient failure becomes
 * `BlobStoreUnavailableError` (no address, no key). Aborted through `signal` (the request or job
 * it serves is gone), it rejects with the signal's reason at once, whatever the SDK was waiting
 * for.
 */
export async function s3Call<T>(
  operation: string,
  run: (send: S3SendOptions) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  signal?.throwIfAborted();
  try {
    return await run(signal ? { abortSignal: signal } : {});
  } catch (e) {
    if (signal?.aborted) throw signal.reason;
    if (isTransientS3Error(e)) throw new BlobStoreUnavailableError(operation, e);
    throw e;
  }
}
