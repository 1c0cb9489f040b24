import { HashingThread } from './hashing-thread';
import { NativeSha256Hashing } from './native-sha256';
import type { RunningHash, UploadHasherKind, UploadHashing } from './upload-hashing';

/**
 * Picks the upload hasher once, on first use: `native` (OpenSSL through FFI; fails where it
 * cannot load), `thread` (wasm on a worker thread), or `auto` (native where it loads, else the
 * thread). `describe()` says which one is in use, for the startup log.
 */
export class ChosenUploadHashing implements UploadHashing {
  private chosen: Promise<{ hashing: UploadHashing; name: string }> | null = null;

  constructor(private readonly kind: UploadHasherKind = 'auto') {}

  async start(saved?: Uint8Array | null): Promise<RunningHash> {
    return (await this.choose()).hashing.start(saved);
  }

  async describe(): Promise<string> {
    return (await this.choose()).name;
  }

  /** Stops the hashing thread if that is the one in use (tests, shutdown). */
  async close(): Promise<void> {
    const chosen = await this.chosen;
    if (chosen?.hashing instanceof HashingThread) await chosen.hashing.close();
  }

  private choose(): Promise<{ hashing: UploadHashing; name: string }> {
    this.chosen ??= (async () => {
      if (this.kind !== 'thread') {
        const native = await NativeSha256Hashing.load();
        if (native) return { hashing: native, name: 'native (OpenSSL SHA-256)' };
        if (this.kind === 'native')
          throw new Error('HARK_UPLOAD_HASHER=native, but native SHA-256 cannot be loaded here');
      }
      return { hashing: new HashingThread(), name: 'thread (wasm SHA-256 on a worker thread)' };
    })();
    return this.chosen;
  }
}
