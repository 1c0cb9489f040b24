import { randomFillSync } from 'node:crypto';

/** Resource ids: a short type prefix and 20 random base64url characters (120 bits). */
export type IdPrefix = 'acct' | 'key' | 'tr' | 'up' | 'use' | 'led' | 'whd';

// Random bytes are drawn from the CSPRNG 4 KiB at a time and each byte is handed out once: one
// call into OpenSSL per ~300 ids instead of one per id (ids are made on every request).
const POOL = Buffer.alloc(4096);
let used = POOL.length;

function randomBase64url(bytes: number): string {
  if (used + bytes > POOL.length) {
    randomFillSync(POOL);
    used = 0;
  }
  const s = POOL.toString('base64url', used, used + bytes);
  POOL.fill(0, used, used + bytes); // nothing handed out stays readable in the pool
  used += bytes;
  return s;
}

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase64url(15)}`;
}

/** Whether `id` has exactly the shape `newId(prefix)` gives it (what Hark itself names). */
export function isIdOf(prefix: IdPrefix, id: string): boolean {
  return (
    id.length === prefix.length + 21 &&
    id.startsWith(`${prefix}_`) &&
    /^[A-Za-z0-9_-]{20}$/.test(id.slice(-20))
  );
}

export function newRequestId(): string {
  return `req_${randomBase64url(12)}`;
}
