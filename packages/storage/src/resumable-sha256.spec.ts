import { createHash, randomBytes } from 'node:crypto';
import { ResumableSha256 } from './resumable-sha256';

describe('ResumableSha256', () => {
  it('a digest carried through saved state equals the one-shot digest', async () => {
    const parts = [randomBytes(1), randomBytes(1000), randomBytes(65537), Buffer.alloc(0), randomBytes(3)];
    let saved: Uint8Array | null = null;
    for (const p of parts) {
      const h = await ResumableSha256.start(saved);
      h.update(p);
      saved = h.save();
    }
    const final = await ResumableSha256.start(saved);
    expect(await final.digestHex()).toBe(createHash('sha256').update(Buffer.concat(parts)).digest('hex'));
  });

  it('digestHex does not disturb the running state', async () => {
    const h = await ResumableSha256.start();
    h.update(Buffer.from('abc'));
    await h.digestHex();
    h.update(Buffer.from('def'));
    expect(await h.digestHex()).toBe(createHash('sha256').update('abcdef').digest('hex'));
  });

  it('empty input', async () => {
    const h = await ResumableSha256.start(null);
    expect(await h.digestHex()).toBe(createHash('sha256').digest('hex'));
  });
});
