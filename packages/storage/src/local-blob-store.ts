import { createReadStream, createWriteStream } from 'node:fs';
import {
  type FileHandle,
  mkdir,
  open,
  readdir,
  rm,
  stat,
  symlink,
  truncate,
  writeFile,
} from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { BlobMissingError } from './blob-errors';
import type { AppendOptions, Appended, BlobPosition, BlobStore } from './blob-store';
import { readBounded } from './read-bounded';

const KEY = /^[A-Za-z0-9_-]{1,64}$/;

/** Writes every byte of `bufs` at `position` (writev may write less than asked). */
async function writeAll(fh: FileHandle, bufs: Buffer[], position: number): Promise<void> {
  const total = bufs.reduce((n, b) => n + b.length, 0);
  let done = (await fh.writev(bufs, position)).bytesWritten;
  if (done === total) return;
  const rest = Buffer.concat(bufs, total);
  while (done < total) {
    const n = (await fh.write(rest, done, total - done, position + done)).bytesWritten;
    if (n <= 0) throw new Error(`write made no progress at byte ${position + done}`);
    done += n;
  }
}

const WRITE_BATCH = 1 << 20;
const MIN_WRITE_BATCH = 64 << 10;
const FLUSH_EVERY = 4 << 20;
/**
 * What the appends of one store may hold waiting for the disk together, about (twice this with
 * their writes in flight): each batches `APPEND_BUFFER_BUDGET / appends running` bytes, 1 MiB
 * while up to 16 run (one upload's throughput), down to 64 KiB, so 200 uploads streaming at once
 * (the OpenAI route's files) hold ~32 MiB, not 400.
 */
const APPEND_BUFFER_BUDGET = 16 << 20;

/** The write batch of each of `running` appends sharing the budget. */
export function writeBatchBytes(running: number): number {
  const share = Math.floor(APPEND_BUFFER_BUDGET / Math.max(1, running));
  return Math.min(WRITE_BATCH, Math.max(MIN_WRITE_BATCH, share));
}

/**
 * Appends arriving bytes at `offset` while more arrive: at most one write is in flight (memory
 * stays ~2 batches per upload while the socket keeps flowing), and written bytes are flushed to
 * disk every few MiB in the background, so the fsync that makes the chunk durable at the end has
 * only the tail left to flush instead of the whole chunk. `batchBytes` is read at every chunk:
 * the store shrinks it while many appends run.
 */
export class PipelinedAppend {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private written = 0;
  private unflushed = 0;
  private writing: Promise<void> = Promise.resolve();
  private flushing: Promise<void> | null = null;
  private error: unknown = null;

  constructor(
    private readonly fh: FileHandle,
    private readonly offset: number,
    private readonly batchBytes: () => number = () => WRITE_BATCH,
  ) {}

  async push(chunk: Buffer): Promise<void> {
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes < this.batchBytes()) return;
    await this.writing;
    this.throwIfFailed();
    this.startWrite();
  }

  /** Writes what is left, waits for everything, fsyncs; resolves with the bytes appended. */
  async finish(): Promise<number> {
    await this.writing;
    this.startWrite();
    await this.settle();
    this.throwIfFailed();
    await this.fh.sync();
    return this.written;
  }

  /** Waits for the write and flush in flight, whatever their outcome. */
  async settle(): Promise<void> {
    await this.writing;
    await this.flushing;
  }

  private throwIfFailed(): void {
    if (this.error) throw this.error;
  }

  private startWrite(): void {
    if (this.pendingBytes === 0) return;
    const bufs = this.pending;
    const bytes = this.pendingBytes;
    const position = this.offset + this.written;
    this.written += bytes;
    this.pending = [];
    this.pendingBytes = 0;
    this.writing = writeAll(this.fh, bufs, position).then(
      () => {
        this.unflushed += bytes;
        if (this.unflushed >= FLUSH_EVERY && !this.flushing) this.startFlush();
      },
      (e: unknown) => void (this.error ??= e),
    );
  }

  private startFlush(): void {
    this.unflushed = 0;
    this.flushing = this.fh.datasync().then(
      () => void (this.flushing = null),
      (e: unknown) => {
        this.flushing = null;
        this.error ??= e;
      },
    );
  }
}

/** Local-filesystem driver: one file per key under `dir`. */
export class LocalBlobStore implements BlobStore {
  /** Appends running now: they share APPEND_BUFFER_BUDGET. */
  private appending = 0;

  constructor(private readonly dir: string) {}

  private file(key: string): string {
    if (!KEY.test(key)) throw new Error('invalid blob key');
    return path.join(this.dir, key);
  }

  async appendAt(
    key: string,
    { offset }: BlobPosition,
    body: AsyncIterable<Buffer>,
    opts: AppendOptions,
  ): Promise<Appended> {
    const file = this.file(key);
    // Audio is the caller's: readable by this service's user only, whatever the umask.
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const fh = await open(file, 'a+', 0o600);
    // Fewer bytes than recorded means recorded ones are lost, which no append may paper over
    // (truncating up to `offset` would fill the gap with zeros).
    const size = (await fh.stat()).size;
    if (size < offset) {
      await fh.close();
      throw new BlobMissingError(key, 'short');
    }
    const out = new PipelinedAppend(fh, offset, () => writeBatchBytes(this.appending));
    this.appending++;
    try {
      // A crash after an earlier write but before Postgres recorded it leaves extra bytes.
      if (size > offset) await fh.truncate(offset);
      await readBounded(body, opts, (chunk) => out.push(chunk));
      return { bytes: await out.finish(), uploadId: null };
    } catch (e) {
      await out.settle();
      await fh.truncate(offset).catch(() => undefined);
      await fh.sync().catch(() => undefined);
      throw e;
    } finally {
      this.appending--;
      await fh.close();
    }
  }

  async truncate(key: string, length: number): Promise<void> {
    await truncate(this.file(key), length);
  }

  /**
   * A symbolic link to the blob when it holds exactly `length` bytes (an upload may be 2 GiB: a
   * link costs no disk and no time); a copy of the first `length` bytes when a crashed append
   * left more, so readers never see unrecorded bytes.
   */
  async fetchTo(
    key: string,
    length: number,
    dest: string,
    opts: { signal?: AbortSignal } = {},
  ): Promise<void> {
    const file = this.file(key);
    const size = await stat(file).then(
      (s) => s.size,
      () => null,
    );
    if (size === null) throw new BlobMissingError(key, 'missing');
    if (size < length) throw new BlobMissingError(key, 'short');
    if (size === length) return symlink(path.resolve(file), dest);
    if (length === 0) return writeFile(dest, '', { flag: 'wx', mode: 0o600 });
    const from = createReadStream(file, { start: 0, end: length - 1 });
    await pipeline(from, createWriteStream(dest, { flags: 'wx', mode: 0o600 }), { signal: opts.signal });
  }

  async remove(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }

  async exists(key: string): Promise<boolean> {
    return stat(this.file(key)).then(
      () => true,
      () => false,
    );
  }

  async *staleKeys(before: Date): AsyncIterable<string> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    for (const name of names) {
      if (!KEY.test(name)) continue;
      const s = await stat(path.join(this.dir, name)).catch(() => null);
      if (s?.isFile() && s.mtime < before) yield name;
    }
  }
}
