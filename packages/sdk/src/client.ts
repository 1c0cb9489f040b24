import { HarkApiError, HarkNetworkError, HarkTimeoutError, HarkUploadError } from './errors';
import { ChunkSizer } from './chunk-sizer';
import { Transcripts, Uploads, WebhookDeliveries } from './resources';
import { type CallOptions, type Fetch, type RetryOptions, type Sleep, Transport } from './transport';
import type { Balance, Limits, Transcript, Upload } from './types';
import { type UploadSource, openSource } from './upload-source';

export interface HarkOptions extends RetryOptions {
  /** An API key (`tk_...`). */
  apiKey: string;
  /** The service's root address, e.g. `http://127.0.0.1:3000` (paths add `/v1`). */
  baseUrl: string;
  /** Per-request time-out in ms; a `wait` request gets its wait on top. Default 60 000. */
  timeoutMs?: number;
  /** Replaces the global `fetch` (tests, proxies, instrumentation). */
  fetch?: Fetch;
  /** Replaces the timer used between retries (tests). */
  sleep?: Sleep;
  /** Jitter source in [0, 1). Default `Math.random`. */
  random?: () => number;
}

/** The largest chunk the service accepts in one PUT. */
export const MAX_CHUNK_BYTES = 16 * 1024 * 1024;

export interface UploadProgress {
  uploadId: string;
  /** Bytes the service has durably stored. */
  receivedBytes: number;
  /** Total when known (files, bytes, or a stream with `expectedBytes`). */
  totalBytes: number | null;
}

export interface UploadOptions extends CallOptions {
  /**
   * Continue this upload (after a crash, say) from its `receivedBytes` instead of creating one.
   * Refused (HarkUploadError) when its declared size or digest is not the source's.
   */
  uploadId?: string;
  /**
   * The create's `Idempotency-Key` (see `CreateUploadOptions`): the same key and source within
   * 24 hours continue the upload made under it, without keeping its id. Default: random.
   */
  idempotencyKey?: string;
  /** Declared size of a stream, sent as `expectedBytes` (files and bytes know their own). */
  expectedBytes?: number;
  /**
   * Lowercase hex SHA-256 of the whole audio, declared so the service checks it (and so
   * `reuseIfIdentical` works). Computed for files and bytes when omitted; `false` skips it.
   */
  sha256?: string | false;
  /**
   * The most bytes per PUT. Default and maximum 16 MiB. Chunks start at 256 KiB and are sized
   * to the link, so each takes about a third of the request time-out (at most 20 s).
   */
  chunkBytes?: number;
  /** Failed chunks in a row before giving up; each is followed by a backoff and a resume. Default 5. */
  maxChunkRetries?: number;
  /** Called after the upload is created or found, and after every stored chunk. */
  onProgress?: (progress: UploadProgress) => void;
}

export interface WaitOptions extends CallOptions {
  /** Give up after this long, with {@link HarkTimeoutError}. Default 30 minutes. */
  timeoutMs?: number;
}

/** Why `upload` was made for another source than this one (size or digest declared), or null. */
function otherSource(upload: Upload, size: number | null, sha256: string | null): string | null {
  if (upload.expectedBytes !== null && size !== null && upload.expectedBytes !== size)
    return `upload ${upload.id} was declared ${upload.expectedBytes} bytes, but the source has ${size}`;
  if (upload.sha256 !== null && sha256 !== null && upload.sha256 !== sha256.toLowerCase())
    return `upload ${upload.id} was declared with another sha256 than the source's`;
  if (size !== null && upload.receivedBytes > size)
    return `upload ${upload.id} holds ${upload.receivedBytes} bytes, more than the source's ${size}`;
  return null;
}

/** Errors after which a chunk is worth sending again (after reading where the upload stands). */
function chunkRetryable(err: unknown): err is HarkApiError | HarkNetworkError {
  if (err instanceof HarkNetworkError) return true;
  return err instanceof HarkApiError && (err.retryable || err.status === 429 || err.status >= 500);
}

/** A chunk that did not arrive in time: cut short by the client or refused 408 by the service. */
function timedOut(err: unknown): boolean {
  return (
    (err instanceof HarkNetworkError && err.timedOut) ||
    // A proxy's own 408 (nginx `client_body_timeout`) has no envelope: the status says it.
    (err instanceof HarkApiError && (err.code === 'request_timeout' || err.status === 408))
  );
}

/**
 * Client for the Hark API.
 *
 * ```ts
 * const hark = new Hark({ apiKey: process.env.HARK_API_KEY!, baseUrl: 'http://127.0.0.1:3000' });
 * ```
 */
export class Hark {
  readonly uploads: Uploads;
  readonly transcripts: Transcripts;
  readonly webhookDeliveries: WebhookDeliveries;
  private readonly transport: Transport;

  constructor(options: HarkOptions) {
    this.transport = new Transport(options);
    this.uploads = new Uploads(this.transport);
    this.transcripts = new Transcripts(this.transport);
    this.webhookDeliveries = new WebhookDeliveries(this.transport);
  }

  /** GET /v1/balance. */
  balance(opts: CallOptions = {}): Promise<Balance> {
    return this.transport.request<Balance>({ method: 'GET', path: '/v1/balance', retry: 'safe', ...opts });
  }

  /** GET /v1/limits. */
  limits(opts: CallOptions = {}): Promise<Limits> {
    return this.transport.request<Limits>({ method: 'GET', path: '/v1/limits', retry: 'safe', ...opts });
  }

  /**
   * Uploads a whole file, buffer or stream, resumably: creates the upload (declaring
   * `expectedBytes` and `sha256` when known), then PUTs chunks sized to the link (at most
   * `chunkBytes`, 16 MiB) in order. When a
   * chunk fails for a reason worth retrying, it backs off, reads the upload's `receivedBytes`
   * and goes on from there, so nothing is sent twice or skipped. Returns the complete upload.
   * An abort (`signal`) is honoured while hashing and while waiting on a stream too; a stream
   * handed in is closed when the call settles, whatever the outcome (a refused option included).
   */
  async upload(source: UploadSource, options: UploadOptions = {}): Promise<Upload> {
    const {
      uploadId,
      idempotencyKey,
      onProgress,
      chunkBytes = MAX_CHUNK_BYTES,
      maxChunkRetries = 5,
      expectedBytes,
      sha256: declaredSha256,
      signal,
      timeoutMs,
    } = options;
    const call: CallOptions = {
      ...(signal ? { signal } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    };
    const src = await openSource(source, {
      ...(expectedBytes !== undefined ? { expectedBytes } : {}),
      ...(typeof declaredSha256 === 'string' ? { sha256: declaredSha256 } : {}),
    });
    // Every refusal from here on closes the source: a stream handed in is ended either way.
    try {
      if (!Number.isInteger(chunkBytes) || chunkBytes < 1 || chunkBytes > MAX_CHUNK_BYTES) {
        throw new RangeError(`chunkBytes must be an integer from 1 to ${MAX_CHUNK_BYTES}`);
      }
      if (uploadId !== undefined && idempotencyKey !== undefined) {
        throw new RangeError('uploadId and idempotencyKey both name the upload to continue: pass one');
      }
      if (src.size === 0) throw new HarkUploadError('the audio is empty', uploadId ?? null, 0);
      const sha256 = declaredSha256 === false ? null : (declaredSha256 ?? (await src.sha256(signal)));
      let upload = uploadId
        ? await this.uploads.get(uploadId, call)
        : await this.uploads.create(
            { ...(src.size !== null ? { expectedBytes: src.size } : {}), ...(sha256 ? { sha256 } : {}) },
            { ...call, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) },
          );
      // Another file's upload would take this one's bytes after its own.
      const other = otherSource(upload, src.size, sha256);
      if (other) throw new HarkUploadError(other, upload.id, upload.receivedBytes);
      const progress = () =>
        onProgress?.({
          uploadId: upload.id,
          receivedBytes: upload.receivedBytes,
          totalBytes: src.size ?? upload.expectedBytes,
        });
      progress();
      const sizer = new ChunkSizer(chunkBytes, Math.min(20_000, (timeoutMs ?? this.transport.timeoutMs) / 3));
      let failures = 0;
      for (;;) {
        signal?.throwIfAborted();
        const offset = upload.receivedBytes;
        const chunk = await src.read(offset, sizer.bytes, signal);
        if (chunk.byteLength === 0) break;
        const sentAt = Date.now();
        try {
          upload = await this.uploads.append(upload.id, chunk, call);
          sizer.stored(chunk.byteLength, Date.now() - sentAt);
          failures = 0;
          progress();
        } catch (err) {
          if (signal?.aborted) throw signal.reason;
          if (timedOut(err)) sizer.timedOut();
          // Where the upload really stands (the lost chunk may have been stored after all), read
          // under the same budget: in an outage the read fails too, and that is one more try,
          // not the end of an upload that may have run for an hour.
          let failure: unknown = err;
          for (;;) {
            if (!chunkRetryable(failure) || ++failures > maxChunkRetries) throw failure;
            const delay = this.transport.delayBeforeRetry(
              failures,
              failure instanceof HarkApiError ? failure.retryAfterSeconds : null,
            );
            if (delay === null) throw failure;
            await this.transport.sleep(delay, signal);
            try {
              upload = await this.uploads.get(upload.id, call);
              break;
            } catch (readErr) {
              if (signal?.aborted) throw signal.reason;
              failure = readErr;
            }
          }
          if (upload.receivedBytes !== offset) progress();
        }
      }
      const total = src.size ?? upload.expectedBytes;
      if (total !== null && upload.receivedBytes !== total) {
        throw new HarkUploadError(
          `the source ended at ${upload.receivedBytes} bytes but ${total} were declared`,
          upload.id,
          upload.receivedBytes,
        );
      }
      return upload;
    } finally {
      await src.close();
    }
  }

  /**
   * Resolves with the transcript once it is `done`, `failed` or `canceled`, holding each request
   * open with `wait` (at most 60 s at a time) rather than polling. Throws
   * {@link HarkTimeoutError} after `timeoutMs`.
   */
  async waitForTranscript(id: string, options: WaitOptions = {}): Promise<Transcript> {
    const { timeoutMs = 30 * 60_000, signal } = options;
    const deadline = Date.now() + timeoutMs;
    let last: Transcript | null = null;
    for (;;) {
      const remaining = deadline - Date.now();
      if (last !== null && remaining <= 0) {
        throw new HarkTimeoutError(`transcript ${id} still processing after ${timeoutMs} ms`, last);
      }
      const wait = Math.min(60, Math.max(1, Math.ceil(remaining / 1000)));
      const started = Date.now();
      last = await this.transcripts.get(id, { wait, ...(signal ? { signal } : {}) });
      if (last.status !== 'processing') return last;
      // The service holds the answer for the whole wait; one that came back at once (a proxy
      // cutting it short, say) must not turn this into a busy loop.
      if (Date.now() - started < 1000) await this.transport.sleep(1000, signal);
    }
  }
}
