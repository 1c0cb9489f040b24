import { createHash, timingSafeEqual } from 'node:crypto';
import { authorizationCredentials } from '@hark/core';

const digest = (v: string) => createHash('sha256').update(v).digest();

/**
 * True when `presented` equals the non-empty `token`. Both sides are hashed first, so the
 * comparison takes the same time whatever the presented value's length or content.
 */
export function tokenMatches(presented: string, token: string): boolean {
  if (token === '') return false;
  return timingSafeEqual(digest(presented), digest(token));
}

/**
 * True when `authorization` is `Bearer <token>`, the scheme in any case, one or more spaces
 * before the token (see {@link authorizationCredentials} and {@link tokenMatches}).
 */
export function bearerMatches(authorization: string | undefined, token: string): boolean {
  return tokenMatches(authorizationCredentials(authorization, 'Bearer') ?? '', token);
}
