import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

// Deletes the lock only while it still holds our token: a sweep that overran its TTL must not
// free the lock another replica has taken since.
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;

/** Why a sweep's signal was aborted: it ran out of time, or the scheduler is stopping. */
export class SweepAbandoned extends Error {
  constructor(reason: string) {
    super(`sweep abandoned: ${reason}`);
    this.name = 'SweepAbandoned';
  }
}

/**
 * Runs `fn` only if no other replica is running the same sweep: `SET key token NX PX ttlMs`.
 * Returns `fn`'s result, or null when the lock was taken. The TTL bounds how long a crashed
 * holder blocks the others, and how long `fn` may run: at the TTL its signal is aborted and this
 * rejects at once with `SweepAbandoned`, whatever `fn` is still waiting for, so a hung sweep never
 * holds its scheduler; work it still finishes after that is the kind the sweeps tolerate twice
 * (each row is handled in its own locked transaction). `stop` (the worker shutting down) aborts
 * the signal too, but `fn` is waited for: the store calls it makes end at once on the signal, and
 * what does not look at it (the reconciler's Postgres work) finishes before the connections close.
 */
export async function withSweepLock<T>(
  redis: Redis,
  key: string,
  ttlMs: number,
  fn: (signal: AbortSignal) => Promise<T>,
  stop?: AbortSignal,
): Promise<T | null> {
  const token = randomBytes(12).toString('hex');
  const taken = await redis.set(key, token, 'PX', ttlMs, 'NX');
  if (taken !== 'OK') return null;
  const abandon = new AbortController();
  let expired: (reason: Error) => void = () => undefined;
  const abandoned = new Promise<never>((_, reject) => (expired = reject));
  const timer = setTimeout(() => {
    const reason = new SweepAbandoned(`still running after ${ttlMs} ms`);
    abandon.abort(reason);
    expired(reason);
  }, ttlMs);
  const onStop = () => abandon.abort(new SweepAbandoned('the worker is stopping'));
  if (stop?.aborted) onStop();
  stop?.addEventListener('abort', onStop, { once: true });
  const run = fn(abandon.signal);
  run.catch(() => undefined); // settles later, if at all, once abandoned
  try {
    return await Promise.race([run, abandoned]);
  } finally {
    clearTimeout(timer);
    stop?.removeEventListener('abort', onStop);
    if (!abandon.signal.aborted) abandon.abort(new SweepAbandoned('finished'));
    await redis.eval(RELEASE, 1, key, token).catch(() => undefined);
  }
}

/** The lock key of one sweep under the deployment's Redis prefix. */
export function sweepLockKey(redisPrefix: string, sweep: string): string {
  return `${redisPrefix}:lock:sweep:${sweep}`;
}
