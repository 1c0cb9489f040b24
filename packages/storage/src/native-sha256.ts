import { createHash } from 'node:crypto';
import os from 'node:os';
import { ResumableSha256 } from './resumable-sha256';
import type { RunningHash, UploadHashing } from './upload-hashing';

/**
 * SHA-256 on OpenSSL's native block function (the copy linked into Node itself, reached through
 * the koffi FFI), about seven times faster than the wasm implementation here. OpenSSL's
 * `SHA256_CTX` is a public, plain struct, so its running state can be copied out after a chunk
 * and back in before the next; it is converted to and from ResumableSha256's saved format, so
 * states stored by either implementation resume in the other.
 *
 * `SHA256_CTX`: `uint32 h[8]; uint32 Nl, Nh; uint32 data[16]; uint32 num, md_len` (112 bytes),
 * native byte order; `Nl/Nh` count bits, `data` holds the `num` bytes of an unfinished block.
 */
const CTX = { h: 0, nl: 32, nh: 36, data: 40, num: 104, mdLen: 108, size: 112 } as const;

/**
 * hash-wasm's saved SHA-256 state: a 4-byte build tag, then its context struct
 * `uint8 message[64]; uint64 length (bytes); uint32 hash[8]; uint32 digest_length` padded to 112
 * bytes, little-endian.
 */
const WASM = { tag: 4, message: 4, length: 68, hash: 76, digestLength: 108, size: 116 } as const;

interface Sha256Fns {
  init(ctx: Buffer): number;
  update(ctx: Buffer, data: Uint8Array, len: number): number;
}

/** Builds a native context from a saved state (or a fresh one). */
function contextFromSaved(
  fns: Sha256Fns,
  saved: Uint8Array | null | undefined,
  template: Uint8Array,
): Buffer {
  const ctx = Buffer.alloc(CTX.size);
  if (!saved || saved.length === 0) {
    if (fns.init(ctx) !== 1) throw new Error('SHA256_Init failed');
    return ctx;
  }
  if (
    saved.length !== WASM.size ||
    Buffer.compare(Buffer.from(saved.subarray(0, WASM.tag)), Buffer.from(template.subarray(0, WASM.tag))) !==
      0
  ) {
    throw new Error('not a SHA-256 state saved by this build');
  }
  const s = Buffer.from(saved.buffer, saved.byteOffset, saved.byteLength);
  const length = s.readBigUInt64LE(WASM.length);
  const bits = length * 8n;
  for (let i = 0; i < 8; i++) ctx.writeUInt32LE(s.readUInt32LE(WASM.hash + 4 * i), CTX.h + 4 * i);
  ctx.writeUInt32LE(Number(bits & 0xffffffffn), CTX.nl);
  ctx.writeUInt32LE(Number((bits >> 32n) & 0xffffffffn), CTX.nh);
  const num = Number(length & 63n);
  s.copy(ctx, CTX.data, WASM.message, WASM.message + num);
  ctx.writeUInt32LE(num, CTX.num);
  ctx.writeUInt32LE(32, CTX.mdLen);
  return ctx;
}

/** The saved-state form of a native context. */
function savedFromContext(ctx: Buffer, template: Uint8Array): Uint8Array {
  const out = Buffer.from(template); // tag and digest_length as hash-wasm writes them
  const bits = (BigInt(ctx.readUInt32LE(CTX.nh)) << 32n) | BigInt(ctx.readUInt32LE(CTX.nl));
  const num = ctx.readUInt32LE(CTX.num);
  out.fill(0, WASM.message, WASM.message + 64);
  ctx.copy(out, WASM.message, CTX.data, CTX.data + num);
  out.writeBigUInt64LE(bits / 8n, WASM.length);
  for (let i = 0; i < 8; i++) out.writeUInt32LE(ctx.readUInt32LE(CTX.h + 4 * i), WASM.hash + 4 * i);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** A running native hash; `update` is synchronous (about 45 µs per 64 KiB). */
export class NativeSession implements RunningHash {
  constructor(
    private readonly fns: Sha256Fns,
    private readonly ctx: Buffer,
    private readonly template: Uint8Array,
  ) {}

  update(chunk: Uint8Array): undefined {
    if (chunk.length > 0 && this.fns.update(this.ctx, chunk, chunk.length) !== 1)
      throw new Error('SHA256_Update failed');
    return undefined;
  }

  save(): Promise<Uint8Array> {
    return Promise.resolve(savedFromContext(this.ctx, this.template));
  }

  end(): void {}
}

export class NativeSha256Hashing implements UploadHashing {
  private constructor(
    private readonly fns: Sha256Fns,
    private readonly template: Uint8Array,
  ) {}

  /**
   * The native implementation, or null where it cannot be used (no koffi build for this
   * platform, no OpenSSL symbols in this Node, a big-endian machine, or a self-test mismatch).
   */
  static async load(): Promise<NativeSha256Hashing | null> {
    try {
      if (os.endianness() !== 'LE') return null;
      // Loaded on demand: koffi throws at require time where it has no build for the platform.
      // A CommonJS module: `default` is its exports, under Node's loader and under jest's.
      const koffi = (await import('koffi')).default;
      const self = koffi.load(null); // this process: Node links OpenSSL and exports its symbols
      const fns: Sha256Fns = {
        init: self.func('int SHA256_Init(void *ctx)') as Sha256Fns['init'],
        update: self.func(
          'int SHA256_Update(void *ctx, const void *data, size_t len)',
        ) as Sha256Fns['update'],
      };
      // The saved form of an empty hash: hash-wasm's build tag and digest length for savedFromContext.
      const native = new NativeSha256Hashing(fns, (await ResumableSha256.start()).save());
      return (await native.selfTest()) ? native : null;
    } catch {
      return null;
    }
  }

  async start(saved?: Uint8Array | null): Promise<NativeSession> {
    return new NativeSession(this.fns, contextFromSaved(this.fns, saved, this.template), this.template);
  }

  /** Native -> wasm -> native across unaligned offsets must give Node's own digest. */
  private async selfTest(): Promise<boolean> {
    const data = Buffer.alloc(300);
    for (let i = 0; i < data.length; i++) data[i] = (i * 131 + 7) & 0xff;
    const first = await this.start(null);
    first.update(data.subarray(0, 101));
    const wasm = await ResumableSha256.start(await first.save());
    wasm.update(data.subarray(101, 229));
    const last = await this.start(wasm.save());
    last.update(data.subarray(229));
    const digest = await (await ResumableSha256.start(await last.save())).digestHex();
    return digest === createHash('sha256').update(data).digest('hex');
  }
}
