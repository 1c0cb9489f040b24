import { createSHA256, type IHasher } from 'hash-wasm';

/**
 * SHA-256 whose running state can be saved in Postgres between chunks and restored in any
 * API replica, so the digest of a 2 GiB upload never needs a re-read of the file.
 */
export class ResumableSha256 {
  private constructor(private readonly h: IHasher) {}

  static async start(saved?: Uint8Array | null): Promise<ResumableSha256> {
    const h = await createSHA256();
    h.init();
    if (saved && saved.length > 0) h.load(saved);
    return new ResumableSha256(h);
  }

  update(chunk: Uint8Array): void {
    this.h.update(chunk);
  }

  save(): Uint8Array {
    return this.h.save();
  }

  /** The digest so far, without disturbing the running state. */
  async digestHex(): Promise<string> {
    const copy = await ResumableSha256.start(this.h.save());
    return copy.h.digest('hex');
  }
}
