import { LIMITS, containsNul } from '@hark/core';

/**
 * Whether an `Idempotency-Key` header value is usable (POST /v1/transcripts and POST
 * /v1/uploads): absent, or 1 to 64 characters without U+0000 (stored in Postgres text; Node's
 * parser refuses it first today). A repeated header arrives joined by Node, so it is one string.
 */
export function idempotencyKeyValid(key: unknown): key is string | undefined {
  return (
    key === undefined ||
    (typeof key === 'string' &&
      key.length > 0 &&
      key.length <= LIMITS.idempotencyKeyMaxChars &&
      !containsNul(key))
  );
}
