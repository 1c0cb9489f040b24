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
    opts: { maxBytes: number; onData?: (chunk: Buffer) => void; tooLarge: () => Error },
  ): Promise<number> {
    const file = this.file(key);
    await mkdir(this.dir, { recursive: true });
    const fh = await open(file, 'a+');
    let written = 0;
    try {
      // A crash after an earlier write but before Postgres recorded it leaves extra bytes.
      if ((await fh.stat()).size !== offset) await fh.truncate(offset);
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      const flush = async () => {
        if (pendingBytes === 0) return;
        const buf = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
        pending = [];
        pendingBytes = 0;
        await fh.write(buf, 0, buf.length, offset + written);
        written += buf.length;
      };
      for await (const chunk of body) {
        if (written + pendingBytes + chunk.length > opts.maxBytes) throw opts.tooLarge();
        opts.onData?.(chunk);
        pending.push(chunk);
        pendingBytes += chunk.length;
        // Fewer, larger writes: socket chunks are often 16-64 KiB.
        if (pendingBytes >= 1 << 20) await flush();
      }
      await flush();
      await fh.sync();
      return written;
    } catch (e) {
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
