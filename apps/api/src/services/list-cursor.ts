import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Opaque, signed list cursors: the position (createdAt, id) of the last item returned and a
 * digest of the filters it was issued for. Keyset paging on (createdAt DESC, id DESC) never
 * skips or repeats, also while new transcripts arrive (they sort before the cursor).
 */
export interface CursorPosition {
  createdAt: Date;
  id: string;
}

export class ListCursorCodec {
  constructor(private readonly secret: string) {}

  private sign(payload: string): string {
    return createHmac('sha256', `cursor:${this.secret}`).update(payload).digest('base64url').slice(0, 22);
  }

  encode(pos: CursorPosition, filterKey: string): string {
    const payload = Buffer.from(
      JSON.stringify([pos.createdAt.getTime(), pos.id, filterDigest(filterKey)]),
    ).toString('base64url');
    return `${payload}.${this.sign(payload)}`;
  }

  /** null when the cursor is forged, damaged or was issued for other filters. */
  decode(cursor: string, filterKey: string): CursorPosition | null {
    const [payload, sig] = cursor.split('.');
    if (!payload || !sig) return null;
    const expected = Buffer.from(this.sign(payload));
    const given = Buffer.from(sig);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
    try {
      const [ms, id, digest] = JSON.parse(Buffer.from(payload, 'base64url').toString()) as [
        number,
        string,
        string,
      ];
      if (typeof ms !== 'number' || typeof id !== 'string' || digest !== filterDigest(filterKey)) return null;
      return { createdAt: new Date(ms), id };
    } catch {
      return null;
    }
  }
}

function filterDigest(filterKey: string): string {
  return createHmac('sha256', 'filters').update(filterKey).digest('base64url').slice(0, 8);
}
