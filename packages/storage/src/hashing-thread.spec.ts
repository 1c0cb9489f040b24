import { createHash, randomBytes } from 'node:crypto';
import { HashingThread } from './hashing-thread';
import { ResumableSha256 } from './resumable-sha256';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
/** The digest of a saved state, computed on the main thread (as the worker app does). */
const digestOf = async (state: Uint8Array) => (await ResumableSha256.start(state)).digestHex();

describe('HashingThread', () => {
  const thread = new HashingThread();
  afterAll(() => thread.close());

  it('states saved between chunks (each chunk a new session) give the one-shot digest', async () => {
    const parts = [
      randomBytes(1),
      randomBytes(1000),
      randomBytes(65537),
      randomBytes(3),
      randomBytes(9 * 1024 * 1024),
    ];
    let saved: Uint8Array | null = null;
    for (const p of parts) {
      const h = await thread.start(saved);
      // Socket-sized pieces, as a request body arrives; awaiting when asked to (backpressure).
      for (let off = 0; off < p.length; off += 65536) await h.update(p.subarray(off, off + 65536));
      saved = await h.save();
      h.end();
    }
    expect(await digestOf(saved!)).toBe(sha(Buffer.concat(parts)));
  });

  it('interoperates with ResumableSha256 states in both directions', async () => {
    const a = randomBytes(5000);
    const b = randomBytes(7000);
    const main = await ResumableSha256.start();
    main.update(a);
    const h = await thread.start(main.save());
    await h.update(b);
    const state = await h.save();
    h.end();
    expect(await digestOf(state)).toBe(sha(Buffer.concat([a, b])));
  });

  it('concurrent sessions do not mix their bytes', async () => {
    const inputs = Array.from({ length: 8 }, (_, i) => randomBytes(100_000 + i * 4099));
    const states = await Promise.all(
      inputs.map(async (input) => {
        const h = await thread.start();
        for (let off = 0; off < input.length; off += 10_000)
          await h.update(input.subarray(off, off + 10_000));
        const s = await h.save();
        h.end();
        return s;
      }),
    );
    expect(await Promise.all(states.map(digestOf))).toEqual(inputs.map(sha));
  });

  it('asks the caller to wait once 4 MiB are queued, and not before', async () => {
    const h = await thread.start();
    const MiB = 1024 * 1024;
    const waits: boolean[] = [];
    for (let i = 0; i < 9; i++) {
      const p = h.update(randomBytes(MiB));
      waits.push(p !== undefined);
      if (p) await p;
    }
    h.end();
    expect(waits).toEqual([false, false, false, true, false, false, false, true, false]);
  });

  it('a thread that dies fails what was pending; the next session gets a new thread', async () => {
    const t = new HashingThread();
    const h = await t.start();
    await t.close();
    await expect(h.save()).rejects.toThrow(/hashing thread/);
    const again = await t.start();
    await again.update(Buffer.from('abc'));
    expect(await digestOf(await again.save())).toBe(sha(Buffer.from('abc')));
    await t.close();
  });
});
