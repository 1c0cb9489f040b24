import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'got';
import { classifyFailure, codeOf, describeFailure, type FailureKind } from './failure';
import type { GuardedClient } from './guarded-client';

/** The transcript failure codes a download can end with (see the spec's failure codes). */
export type DownloadErrorCode = 'audio_too_large' | 'audio_unreachable';

/**
 * A download that did not produce a complete file. `message` is safe to show to the API caller
 * (no addresses, no raw error text); `reason` and `cause` are for logs.
 */
export class DownloadError extends Error {
  override readonly name = 'DownloadError';
  constructor(
    readonly code: DownloadErrorCode,
    message: string,
    /** What went wrong, finer than `code`: a failure kind, `http_status` or `too_large`. */
    readonly reason: FailureKind | 'http_status' | 'too_large',
    /** Body bytes received before the download stopped. */
    readonly bytesRead: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface DownloadOptions {
  /** Largest body accepted, in bytes; one byte more aborts with `audio_too_large`. */
  maxBytes: number;
  /** Aborts the download (cancel); the promise then rejects with `signal.reason`, not a DownloadError. */
  signal?: AbortSignal;
}

/**
 * Streams `url` to `destPath` without holding the body in memory, stopping as soon as more than
 * `maxBytes` arrived (or at once when Content-Length already says so). On any failure the
 * partial file is removed. Rejects with a DownloadError, the abort reason, or the file's own
 * error (ENOSPC) when writing it failed. Redirects, time-out and the address guard come from `client`.
 */
export async function downloadToFile(
  client: GuardedClient,
  url: string,
  destPath: string,
  { maxBytes, signal }: DownloadOptions,
): Promise<{ bytes: number }> {
  let bytes = 0;
  // Set right before we destroy the streams ourselves, so the catch knows what really happened
  // (got re-wraps errors passed to destroy()).
  let stop: { reason: 'too_large' } | { reason: 'http_status'; status: number } | null = null;

  const source = client.stream(url, { throwHttpErrors: false });
  source.once('response', (response: Response) => {
    const status = response.statusCode;
    const declared = Number(response.headers['content-length']);
    if (status < 200 || status > 299) {
      stop = { reason: 'http_status', status };
      source.destroy(new Error(`status ${status}`));
    } else if (Number.isFinite(declared) && declared > maxBytes && !response.headers['content-encoding']) {
      stop = { reason: 'too_large' };
      source.destroy(new Error('content-length over the limit'));
    }
  });
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      if (bytes > maxBytes) {
        stop = { reason: 'too_large' };
        callback(new Error('body over the limit'));
        return;
      }
      callback(null, chunk);
    },
  });

  try {
    await pipeline(source, counter, createWriteStream(destPath), signal ? { signal } : {});
    return { bytes };
  } catch (error) {
    await rm(destPath, { force: true });
    if (signal?.aborted) throw signal.reason;
    // A full disk is this machine's trouble, not the URL's: thrown as it is, so the caller
    // retries it rather than blaming the audio's host.
    if (DISK_ERRORS.has(codeOf(error) ?? '')) throw error;
    throw toDownloadError(stop, error, maxBytes, bytes);
  }
}

/** Errors only writing the file can raise (no socket error has these codes). */
const DISK_ERRORS = new Set(['ENOSPC', 'EDQUOT', 'EFBIG', 'EROFS', 'EIO']);

function toDownloadError(
  stop: { reason: 'too_large' } | { reason: 'http_status'; status: number } | null,
  error: unknown,
  maxBytes: number,
  bytes: number,
): DownloadError {
  const cause = { cause: error };
  if (stop?.reason === 'too_large') {
    return new DownloadError(
      'audio_too_large',
      `The audio is larger than ${maxBytes} bytes`,
      'too_large',
      bytes,
      cause,
    );
  }
  if (stop?.reason === 'http_status') {
    const message = `The audio URL answered with HTTP status ${stop.status}`;
    return new DownloadError('audio_unreachable', message, 'http_status', bytes, cause);
  }
  const kind = classifyFailure(error);
  const message = `The audio URL could not be fetched: ${describeFailure(kind)}`;
  return new DownloadError('audio_unreachable', message, kind, bytes, cause);
}
