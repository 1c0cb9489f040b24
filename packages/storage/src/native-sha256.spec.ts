import { createHash, randomBytes } from 'node:crypto';
import { ChosenUploadHashing } from './choose-upload-hashing';
import { HashingThread } from './hashing-thread';
import { NativeSha256Hashing } from './native-sha256';
import { ResumableSha256 } from './resumable-sha256';
import type { UploadHashing } from './upload-hashing';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const digestOf = async (state: Uint8Array) => (await ResumableSha256.start(state)).digestHex();

describe('NativeSha256Hashing', () => {
  let native: NativeSha256Hashing;
  beforeAll(async () => {
    // This suite runs where the product runs (Linux x64, Node with OpenSSL): it must load here.
    const loaded = await NativeSha256Hashing.load();
    if (!loaded) throw new Error('native SHA-256 did not load on this machine');
    native = loaded;
  });

  it('a digest carried through saved states, one session per chunk, equals the one-shot digest', async () => {
    const parts = [
      randomBytes(1),
      randomBytes(63),
      randomBytes(64),
      randomBytes(65),
      randomBytes(1000),
      randomBytes(65537),
      randomBytes(3),
    ];
    let saved: Uint8Array | null = null;
    for (const p of parts) {
      const h = await native.start(saved);
      for (let off = 0; off < p.length; off += 4096) h.update(p.subarray(off, off + 4096));
      saved = await h.save();
      h.end();
    }
    expect(await digestOf(saved!)).toBe(sha(Buffer.concat(parts)));
  });

  it('hashes views into larger buffers at their offset, not from the start of the backing store', async () => {
    const backing = randomBytes(10_000);
    const view = backing.subarray(1234, 7777);
    const h = await native.start();
    h.update(view);
    expect(await digestOf(await h.save())).toBe(sha(Buffer.from(view)));
  });

  it.each([0, 1, 55, 56, 63, 64, 65, 127, 128, 4097])(
    'resumes wasm states and wasm resumes its states at a split of %i bytes',
    async (split) => {
      const data = randomBytes(split + 300);
      // wasm first, native second
      const w = await ResumableSha256.start();
      w.update(data.subarray(0, split));
      const n = await native.start(w.save());
      n.update(data.subarray(split));
      expect(await digestOf(await n.save())).toBe(sha(data));
      // native first, wasm second
      const n2 = await native.start();
      n2.update(data.subarray(0, split));
      const w2 = await ResumableSha256.start(await n2.save());
      w2.update(data.subarray(split));
      expect(await w2.digestHex()).toBe(sha(data));
    },
  );

  it('a saved state is byte-identical to the wasm state for the same input', async () => {
    const data = randomBytes(5000 + 17);
    const w = await ResumableSha256.start();
    w.update(data);
    const n = await native.start();
    n.update(data);
    expect(Buffer.from(await n.save())).toEqual(Buffer.from(w.save()));
  });

  it('refuses a state it did not write', async () => {
    await expect(native.start(randomBytes(116))).rejects.toThrow('not a SHA-256 state');
    await expect(native.start(randomBytes(40))).rejects.toThrow('not a SHA-256 state');
  });

  it('empty input', async () => {
    const h = await native.start();
    expect(await digestOf(await h.save())).toBe(sha(Buffer.alloc(0)));
  });
});

describe('ChosenUploadHashing', () => {
  const cases: [string, () => UploadHashing, RegExp][] = [
    ['auto', () => new ChosenUploadHashing('auto'), /^native/],
    ['native', () => new ChosenUploadHashing('native'), /^native/],
    ['thread', () => new ChosenUploadHashing('thread'), /^thread/],
  ];
  it.each(cases)('%s hashes uploads and says which implementation it uses', async (_kind, make, name) => {
    const hashing = make() as ChosenUploadHashing;
    try {
      expect(await hashing.describe()).toMatch(name);
      const data = randomBytes(200_000);
      const h = await hashing.start();
      await h.update(data);
      const saved = await h.save();
      h.end();
      expect(await digestOf(saved)).toBe(sha(data));
    } finally {
      await hashing.close();
    }
  });

  it('states move between the thread and the native hasher (a mixed fleet of replicas)', async () => {
    const thread = new HashingThread();
    const native = new ChosenUploadHashing('native');
    try {
      const [a, b, c] = [randomBytes(70_001), randomBytes(33), randomBytes(1 << 20)];
      const h1 = await native.start();
      await h1.update(a);
      const h2 = await thread.start(await h1.save());
      await h2.update(b);
      const s2 = await h2.save();
      h2.end();
      const h3 = await native.start(s2);
      await h3.update(c);
      expect(await digestOf(await h3.save())).toBe(sha(Buffer.concat([a, b, c])));
    } finally {
      await thread.close();
    }
  });
});
