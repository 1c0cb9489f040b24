import { randomBytes } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';
import { PipelinedAppend, writeBatchBytes } from './local-blob-store';

/** A file handle that records what reaches it; `failFlush` makes background flushes fail. */
function fakeFile(opts: { failFlush?: boolean; shortWrites?: boolean } = {}) {
  const file = Buffer.alloc(64 << 20);
  const log: string[] = [];
  let size = 0;
  const put = (b: Buffer, position: number) => {
    b.copy(file, position);
    size = Math.max(size, position + b.length);
  };
  const fh = {
    writev: async (bufs: Buffer[], position: number) => {
      log.push(`writev ${position}`);
      const all = Buffer.concat(bufs);
      // A short write: only half reaches the file; the caller must write the rest.
      const n = opts.shortWrites ? Math.ceil(all.length / 2) : all.length;
      put(all.subarray(0, n), position);
      return { bytesWritten: n, buffers: bufs };
    },
    write: async (b: Buffer, offset: number, length: number, position: number) => {
      log.push(`write ${position}`);
      put(b.subarray(offset, offset + length), position);
      return { bytesWritten: length, buffer: b };
    },
    datasync: async () => {
      log.push('datasync');
      if (opts.failFlush) throw new Error('EIO');
    },
    sync: async () => void log.push('sync'),
  };
  return { fh: fh as unknown as FileHandle, log, bytes: () => file.subarray(0, size) };
}

async function pushAll(out: PipelinedAppend, data: Buffer, piece = 65536): Promise<void> {
  for (let off = 0; off < data.length; off += piece) await out.push(data.subarray(off, off + piece));
}

describe('PipelinedAppend', () => {
  it('writes every byte in order at the offset, flushes along the way, and fsyncs last', async () => {
    const f = fakeFile();
    const data = randomBytes(10 << 20);
    const out = new PipelinedAppend(f.fh, 1000);
    await pushAll(out, data);
    expect(await out.finish()).toBe(data.length);
    expect(f.bytes().subarray(1000).equals(data)).toBe(true);
    expect(f.log.filter((l) => l === 'datasync').length).toBeGreaterThanOrEqual(1);
    expect(f.log.at(-1)).toBe('sync');
  });

  it('finishes short writes', async () => {
    const f = fakeFile({ shortWrites: true });
    const data = randomBytes(3 << 20);
    const out = new PipelinedAppend(f.fh, 0);
    await pushAll(out, data);
    expect(await out.finish()).toBe(data.length);
    expect(f.bytes().equals(data)).toBe(true);
  });

  it('a failed background flush fails the append', async () => {
    const f = fakeFile({ failFlush: true });
    const out = new PipelinedAppend(f.fh, 0);
    const run = async () => {
      await pushAll(out, randomBytes(12 << 20));
      return out.finish();
    };
    await expect(run()).rejects.toThrow('EIO');
    expect(f.log).not.toContain('sync');
  });

  it('writes in the batches the store asks for at the time of each chunk', async () => {
    const f = fakeFile();
    const data = randomBytes(2 << 20);
    let batch = 1 << 20;
    const out = new PipelinedAppend(f.fh, 0, () => batch);
    await pushAll(out, data.subarray(0, 1 << 20));
    batch = 256 << 10; // many appends started meanwhile
    await pushAll(out, data.subarray(1 << 20));
    expect(await out.finish()).toBe(data.length);
    expect(f.bytes().equals(data)).toBe(true);
    expect(f.log.filter((l) => l.startsWith('writev'))).toEqual([
      'writev 0',
      ...[0, 1, 2, 3].map((i) => `writev ${(1 << 20) + i * (256 << 10)}`),
    ]);
  });
});

describe('writeBatchBytes', () => {
  it('1 MiB while up to 16 appends run, then a share of 16 MiB, never under 64 KiB', () => {
    expect([1, 16, 32, 200, 256, 5000].map((n) => Math.floor(writeBatchBytes(n) / 1024))).toEqual([
      1024, 1024, 512, 81, 64, 64,
    ]);
  });
});
