import { createReadStream } from 'node:fs';
import { mkdir, open, rm, stat, truncate } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { BlobStore } from './blob-store';

const KEY = /^[A-Za-z0-9_-]{1,64}$/;

/** Local-filesystem driver: one file per key under `dir`. */
export class LocalBlobStore implements BlobStore {
  constructor(private readonly dir: string) {}

  private file(key: string): string {
    if (!KEY.test(key)) throw new Error('invalid blob key');
    return path.join(this.dir, key);
  }

  async appendAt(
    key: string,
    offset: number,
    body: AsyncIterable<Buffer>,
    opts: { maxBytes: number; onData?: (chunk: Buffer) => void | Promise<void>; tooLarge: () => Error },
  ): Promise<number> {
    const file = this.file(key);
    await mkdir(this.dir, { recursive: true });
    const fh = await open(file, 'a+');
    let written = 0;
    let inflight: Promise<void> = Promise.resolve();
    try {
      // A crash after an earlier write but before Postgres recorded it leaves extra bytes.
      if ((await fh.stat()).size !== offset) await fh.truncate(offset);
      // Disk writes overlap the receiving and hashing of the next bytes: at most one write is in
      // flight, so memory stays bounded (~2 MiB per upload) while the socket keeps flowing.
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      let writeError: unknown = null;
      const startWrite = () => {
        if (pendingBytes === 0) return;
        const buf = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
        const position = offset + written;
        written += buf.length;
        pending = [];
        pendingBytes = 0;
        inflight = fh.write(buf, 0, buf.length, position).then(
          () => undefined,
          (e: unknown) => void (writeError ??= e),
        );
      };
      let received = 0;
      for await (const chunk of body) {
        received += chunk.length;
        if (received > opts.maxBytes) throw opts.tooLarge();
        const hashed = opts.onData?.(chunk);
        if (hashed) await hashed;
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes >= 1 << 20) {
          await inflight;
          if (writeError) throw writeError;
          startWrite();
        }
      }
      await inflight;
      startWrite();
      await inflight;
      if (writeError) throw writeError;
      await fh.sync();
      return written;
    } catch (e) {
      await inflight.catch(() => undefined);
      await fh.truncate(offset).catch(() => undefined);
      await fh.sync().catch(() => undefined);
      throw e;
    } finally {
      await fh.close();
    }
  }

  async truncate(key: string, length: number): Promise<void> {
    await truncate(this.file(key), length);
  }

  async localPath(key: string): Promise<string> {
    return this.file(key);
  }

  read(key: string, length: number): Readable {
    if (length === 0) return createReadStream(this.file(key), { start: 0, end: -1 });
    return createReadStream(this.file(key), { start: 0, end: length - 1 });
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
}
