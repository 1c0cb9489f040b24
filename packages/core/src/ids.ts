import { randomBytes } from 'node:crypto';

/** Resource ids: a short type prefix and 20 random base64url characters (120 bits). */
export type IdPrefix = 'acct' | 'key' | 'tr' | 'up' | 'use' | 'led' | 'whd';

export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBytes(15).toString('base64url')}`;
}

export function newRequestId(): string {
  return `req_${randomBytes(12).toString('base64url')}`;
}
