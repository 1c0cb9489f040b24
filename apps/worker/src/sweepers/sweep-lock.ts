import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

// Deletes the lock only while it still holds our token: a sweep that overran its TTL must not
// free the lock another replica has taken since.
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/**
 * Runs `fn` only if no other replica is running the same sweep: `SET key token NX PX ttlMs`.
 * Returns `fn`'s result, or null when the lock was taken. The TTL bounds how long a crashed
 * holder blocks the others; a sweep longer than the TTL may overlap the next one, which the
 * sweeps tolerate (each row is handled in its own locked transaction).
 */
export async function withSweepLock<T>(
  redis: Redis,
  key: string,
  ttlMs: number,
  fn: () => Promise<T>,
): Promise<T | null> {
  const token = randomBytes(12).toString('hex');
  const taken = await redis.set(key, token, 'PX', ttlMs, 'NX');
  if (taken !== 'OK') return null;
  try {
    return await fn();
  } finally {
    await redis.eval(RELEASE, 1, key, token).catch(() => undefined);
  }
}

/** The lock key of one sweep under the deployment's Redis prefix. */
export function sweepLockKey(redisPrefix: string, sweep: string): string {
  return `${redisPrefix}:lock:sweep:${sweep}`;
}
