import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { HarkUploadError } from './errors';

/**
 * What `upload` accepts: a file path (or `file:` URL), bytes in memory, a Node `Readable`, a web
 * `ReadableStream`, or any async iterable of bytes.
 */
export type UploadSource =
  | string
  | URL
  | Uint8Array
  | Readable
  | WebReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array | string>;

/**
 * Random access where the source allows it (files, bytes), forward-only for streams. `read`
 * returns the bytes at `offset` (at most `max`), empty at the end.
 */
export interface ChunkSource {
  /** Total size when known. */
  readonly size: number | null;
  /**
   * Lowercase hex SHA-256 of the whole source; null when it cannot be known in advance. Rejects
   * with `signal.reason` once it is aborted.
   */
  sha256(signal?: AbortSignal): Promise<string | null>;
  /** Rejects with `signal.reason` once it is aborted, even while the source holds back its bytes. */
  read(offset: number, max: number, signal?: AbortSignal): Promise<Uint8Array>;
  /** Releases the source, streams included, whether or not it was read to the end. */
  close(): Promise<void>;
}

const EMPTY = new Uint8Array(0);

/** `promise`, or a rejection with the signal's reason as soon as it is aborted. */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

class BytesSource implements ChunkSource {
  constructor(private readonly bytes: Uint8Array) {}
  get size() {
    return this.bytes.byteLength;
  }
  async sha256() {
    return createHash('sha256').update(this.bytes).digest('hex');
  }
  async read(offset: number, max: number) {
    return this.bytes.subarray(offset, offset + max);
  }
  async close() {}
}

class FileSource implements ChunkSource {
  private constructor(
    private readonly path: string | URL,
    private readonly handle: FileHandle,
    readonly size: number,
  ) {}

  static async open(path: string | URL): Promise<FileSource> {
    const handle = await open(path, 'r');
    try {
      const st = await handle.stat();
      if (!st.isFile()) throw new TypeError(`${String(path)} is not a file`);
      return new FileSource(path, handle, st.size);
    } catch (e) {
      await handle.close();
      throw e;
    }
  }

  async sha256(signal?: AbortSignal) {
    const hash = createHash('sha256');
    // Checked per chunk: a large file takes seconds to hash, and an abort must not wait for it
    // (leaving the loop destroys the read stream).
    for await (const chunk of createReadStream(this.path)) {
      signal?.throwIfAborted();
      hash.update(chunk as Buffer);
    }
    signal?.throwIfAborted();
    return hash.digest('hex');
  }

  async read(offset: number, max: number) {
    const len = Math.max(0, Math.min(max, this.size - offset));
    if (len === 0) return EMPTY;
    const buf = Buffer.allocUnsafe(len);
    let got = 0;
    while (got < len) {
      const { bytesRead } = await this.handle.read(buf, got, len - got, offset + got);
      if (bytesRead === 0) break; // the file shrank under us; the server will see the short length
      got += bytesRead;
    }
    return buf.subarray(0, got);
  }

  async close() {
    await this.handle.close();
  }
}

type StreamLike = Exclude<UploadSource, string | URL | Uint8Array>;

function iterate(stream: StreamLike): AsyncIterator<Uint8Array | string> {
  // A web ReadableStream is read through a reader even where it is async iterable: cancelling a
  // reader ends a pending read, while the iterator's return() would wait behind it.
  if (!('getReader' in stream)) return (stream as AsyncIterable<Uint8Array | string>)[Symbol.asyncIterator]();
  const reader = (stream as WebReadableStream<Uint8Array>).getReader();
  return {
    next: async () => {
      const r = await reader.read();
      return r.done ? { done: true, value: undefined } : { done: false, value: r.value };
    },
    return: async () => {
      await reader.cancel();
      return { done: true, value: undefined };
    },
  };
}

/**
 * Forward-only: keeps the current chunk so a failed PUT can be sent again from any offset inside
 * it; an offset before the chunk cannot be served (the stream has moved on).
 */
class StreamSource implements ChunkSource {
  private buf: Uint8Array = EMPTY;
  private bufStart = 0;
  private pending: Uint8Array | null = null;
  private ended = false;
  /** True while a read of the stream is outstanding (one given up on after an abort, say). */
  private reading = false;
  private readonly it: AsyncIterator<Uint8Array | string>;

  constructor(
    private readonly stream: StreamLike,
    readonly size: number | null,
    private readonly knownSha256: string | null,
  ) {
    this.it = iterate(stream);
  }

  async sha256() {
    return this.knownSha256;
  }

  async read(offset: number, max: number, signal?: AbortSignal) {
    if (offset < this.bufStart) {
      throw new HarkUploadError(
        `the upload is at byte ${offset} but the stream has already passed byte ${this.bufStart}; a stream cannot rewind`,
        null,
        offset,
      );
    }
    while (offset >= this.bufStart + this.buf.byteLength) {
      if (this.ended && this.pending === null) return EMPTY;
      this.bufStart += this.buf.byteLength;
      this.buf = await this.fill(max, signal);
      if (this.buf.byteLength === 0) return EMPTY;
    }
    return this.buf.subarray(offset - this.bufStart, offset - this.bufStart + max);
  }

  /** The next `max` bytes of the stream (fewer only at its end). */
  private async fill(max: number, signal: AbortSignal | undefined): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    let n = 0;
    while (n < max) {
      let piece = this.pending;
      this.pending = null;
      if (piece === null) {
        if (this.ended) break;
        this.reading = true;
        const r = await unlessAborted(this.it.next(), signal);
        this.reading = false;
        if (r.done) {
          this.ended = true;
          break;
        }
        piece = typeof r.value === 'string' ? Buffer.from(r.value, 'utf8') : r.value;
      }
      if (n + piece.byteLength > max) {
        this.pending = piece.subarray(max - n);
        piece = piece.subarray(0, max - n);
      }
      if (piece.byteLength > 0) parts.push(piece);
      n += piece.byteLength;
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts, n);
  }

  async close() {
    if (this.ended) return;
    this.ended = true;
    // A Node Readable's iterator only destroys the stream once it has started, and its return()
    // (an async generator's) waits behind a pending read that a stalled stream never settles.
    const node = this.stream as Partial<Readable>;
    if (typeof node.destroy === 'function') node.destroy();
    const done = Promise.resolve(this.it.return?.());
    // Behind a stalled read the iterator may never finish returning: do not wait for it then.
    if (this.reading) done.catch(() => undefined);
    else await done;
  }
}

export interface SourceHints {
  /** Declared size of a stream. */
  expectedBytes?: number;
  /** Known digest; for files and bytes it is computed when not given. */
  sha256?: string;
}

export async function openSource(source: UploadSource, hints: SourceHints = {}): Promise<ChunkSource> {
  if (typeof source === 'string' || source instanceof URL) return FileSource.open(source);
  if (source instanceof Uint8Array) return new BytesSource(source);
  if (
    typeof source === 'object' &&
    source !== null &&
    (Symbol.asyncIterator in source || 'getReader' in source)
  ) {
    return new StreamSource(source, hints.expectedBytes ?? null, hints.sha256 ?? null);
  }
  throw new TypeError(
    'upload source must be a file path, a Uint8Array/Buffer, a Readable, a ReadableStream or an async iterable',
  );
}
