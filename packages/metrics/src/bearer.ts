import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (v: string) => createHash('sha256').update(v).digest();

/**
 * True when `authorization` is exactly `Bearer <token>`. Both sides are hashed first, so the
 * comparison takes the same time whatever the presented value's length or content.
 */
export function bearerMatches(authorization: string | undefined, token: string): boolean {
  if (token === '') return false;
  const presented = /^Bearer (.+)$/.exec(authorization ?? '')?.[1] ?? '';
  return timingSafeEqual(digest(presented), digest(token));
}
