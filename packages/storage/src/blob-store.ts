import type { Readable } from 'node:stream';

/**
 * Where upload bytes live. The API appends, workers read; both must see the same store
 * (for the local driver: the same directory, e.g. a shared volume).
 */
export interface BlobStore {
  /**
   * Appends `body` at byte `offset` (the durable length recorded in Postgres). Anything past
   * `offset` left by an earlier crash is cut first. The bytes are fsync'ed before this resolves;
   * on any failure the file is truncated back to `offset` and the error rethrown.
   * `onData` sees every chunk before it is written (incremental hashing); when it returns a
   * promise, reading waits for it (backpressure).
   */
  appendAt(
    key: string,
    offset: number,
    body: AsyncIterable<Buffer>,
    opts: { maxBytes: number; onData?: (chunk: Buffer) => void | Promise<void>; tooLarge: () => Error },
  ): Promise<number>;
  /** Cuts the blob back to `length` (used when Postgres refused to record an append). */
  truncate(key: string, length: number): Promise<void>;
  /** A local file path for tools such as ffmpeg; `length` bytes of it are valid. */
  localPath(key: string): Promise<string>;
  read(key: string, length: number): Readable;
  remove(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
}
