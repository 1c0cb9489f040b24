/** The first chunk of an upload: small enough for a slow link to send well inside a time-out. */
export const FIRST_CHUNK_BYTES = 256 * 1024;
/** The smallest chunk a slow link is cut down to. */
export const MIN_CHUNK_BYTES = 16 * 1024;
/** How much one chunk may grow over the one before (a rate measured on a small chunk is rough). */
const GROWTH = 4;

/**
 * Sizes an upload's chunks to the link, so each PUT takes about `targetMs`: a 16 MiB chunk needs
 * 280 KB/s to arrive within a 60 s time-out, and a PUT that times out stores nothing, so fixed
 * 16 MiB chunks never finished on a slower link. Starts at {@link FIRST_CHUNK_BYTES}, then sizes
 * each chunk from the rate of the one before (at most 4 times its size, at most `maxBytes`), and
 * halves after a chunk that timed out.
 */
export class ChunkSizer {
  private current: number;
  private readonly min: number;

  constructor(
    private readonly maxBytes: number,
    private readonly targetMs: number,
  ) {
    this.current = Math.min(maxBytes, FIRST_CHUNK_BYTES);
    this.min = Math.min(maxBytes, MIN_CHUNK_BYTES);
  }

  /** Bytes for the next PUT. */
  get bytes(): number {
    return this.current;
  }

  /** A chunk of `bytes` was stored, `ms` after it was sent. */
  stored(bytes: number, ms: number): void {
    const fitting = Math.floor((bytes / Math.max(ms, 1)) * this.targetMs);
    this.current = clamp(fitting, this.min, Math.min(this.maxBytes, this.current * GROWTH));
  }

  /** A chunk did not arrive in time. */
  timedOut(): void {
    this.current = Math.max(this.min, Math.floor(this.current / 2));
  }
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
