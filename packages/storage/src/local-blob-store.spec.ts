import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LocalBlobStore } from './local-blob-store';

async function* chunks(...parts: (Buffer | Error)[]): AsyncIterable<Buffer> {
  for (const p of parts) {
    if (p instanceof Error) throw p;
    yield p;
  }
}

/** A recorded length; the local driver records no upload id. */
const at = (offset: number) => ({ offset, uploadId: null });

describe('LocalBlobStore', () => {
  let dir: string;
  let store: LocalBlobStore;
  const tooLarge = () => new Error('too large');
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'hark-blob-'));
    store = new LocalBlobStore(dir);
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('appends at the recorded offset and cuts bytes a crash left past it', async () => {
    expect(
      await store.appendAt('a', at(0), chunks(Buffer.from('hello ')), { maxBytes: 100, tooLarge }),
    ).toEqual({ bytes: 6, uploadId: null });
    await writeFile(path.join(dir, 'a'), 'hello GARBAGE'); // unrecorded tail from a crash
    expect(
      await store.appendAt('a', at(6), chunks(Buffer.from('wor'), Buffer.from('ld')), {
        maxBytes: 100,
        tooLarge,
      }),
    ).toEqual({ bytes: 5, uploadId: null });
    expect(await readFile(path.join(dir, 'a'), 'utf8')).toBe('hello world');
  });

  it('audio is readable by its owner only: files 0600 in a folder it makes 0700 (lifecycle audit)', async () => {
    const nested = new LocalBlobStore(path.join(dir, 'uploads'));
    await nested.appendAt('a', at(0), chunks(Buffer.from('hello world')), { maxBytes: 100, tooLarge });
    expect((await stat(path.join(dir, 'uploads'))).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(dir, 'uploads', 'a'))).mode & 0o777).toBe(0o600);
    // A copy of the first bytes (a crash left more than recorded) is the owner's only too.
    await nested.fetchTo('a', 5, path.join(dir, 'copy'));
    expect((await stat(path.join(dir, 'copy'))).mode & 0o777).toBe(0o600);
  });

  it('a failing body leaves the blob at its old length', async () => {
    await store.appendAt('b', at(0), chunks(Buffer.from('keep')), { maxBytes: 100, tooLarge });
    await expect(
      store.appendAt('b', at(4), chunks(Buffer.alloc(2 << 20, 1), new Error('client went away')), {
        maxBytes: 8 << 20,
        tooLarge,
      }),
    ).rejects.toThrow('client went away');
    expect(await readFile(path.join(dir, 'b'), 'utf8')).toBe('keep');
  });

  it('refuses bodies over maxBytes, writing nothing', async () => {
    await expect(
      store.appendAt('c', at(0), chunks(Buffer.alloc(60), Buffer.alloc(60)), { maxBytes: 100, tooLarge }),
    ).rejects.toThrow('too large');
    expect((await readFile(path.join(dir, 'c'))).length).toBe(0);
  });

  it('rejects keys that could escape the directory', async () => {
    await expect(store.fetchTo('../etc/passwd', 1, path.join(dir, 'out'))).rejects.toThrow(
      'invalid blob key',
    );
  });
});
