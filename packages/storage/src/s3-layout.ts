/**
 * Where an upload's bytes sit in the bucket, for a key `k` under the prefix `p`:
 *
 * - `p` + `k`: the whole blob, once sealed (its multipart upload completed).
 * - the multipart upload on `p` + `k` while it grows: part n holds bytes
 *   [(n-1)·S, n·S) for the fixed part size S, so which part holds a byte depends on the offset
 *   alone, never on how the client cut its chunks. Re-sending a part overwrites it.
 * - `p` + `k` + `.tail-<end>`: the remainder, bytes [⌊end/S⌋·S, end) not yet in a full part,
 *   when `end` is not a multiple of S. Named by the length it completes, so an append that
 *   crashes before Postgres records it writes a new name and never touches the remainder of
 *   the durable length (S3 cannot read back a part, so that remainder is the only copy of
 *   those bytes until the part they open is complete). Its metadata `extends` names the length
 *   whose remainder it continued (when that length had one): an append at `end` reads this
 *   remainder anyway, and `end` being recorded means that older one is no longer needed, so it is
 *   deleted by name. Nothing on the append path lists.
 *
 * tus' S3 store keeps a remainder the same way (one `.part` object); naming it by its end is
 * what makes an unrecorded append harmless here.
 */

/** S3's minimum part size (except the last part); 2 GiB needs 410 of them (limit 10,000). */
export const S3_PART_BYTES = 5 * 1024 * 1024;

const KEY = /^[A-Za-z0-9_-]{1,64}$/;
const TAIL = /\.tail-(\d+)$/;

export class S3Layout {
  constructor(
    readonly prefix: string,
    readonly partBytes: number = S3_PART_BYTES,
  ) {}

  object(key: string): string {
    if (!KEY.test(key)) throw new Error('invalid blob key');
    return this.prefix + key;
  }

  tail(key: string, end: number): string {
    return `${this.object(key)}.tail-${end}`;
  }

  /** The prefix every remainder of `key` starts with. */
  tails(key: string): string {
    return `${this.object(key)}.tail-`;
  }

  /** The end a remainder's name records, or null for another name. */
  tailEnd(storedKey: string): number | null {
    const m = TAIL.exec(storedKey);
    return m ? Number(m[1]) : null;
  }

  /** The blob key a stored name belongs to (object, remainder or upload), or null. */
  keyOf(storedKey: string): string | null {
    if (!storedKey.startsWith(this.prefix)) return null;
    const key = storedKey.slice(this.prefix.length).replace(TAIL, '');
    return KEY.test(key) ? key : null;
  }

  /** Bytes of a blob of `length` that sit in full parts, and the remainder's size. */
  split(length: number): { fullParts: number; rest: number } {
    const fullParts = Math.floor(length / this.partBytes);
    return { fullParts, rest: length - fullParts * this.partBytes };
  }
}
