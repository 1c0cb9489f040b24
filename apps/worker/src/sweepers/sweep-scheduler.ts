import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { sweepLockKey, withSweepLock } from './sweep-lock';

export interface Sweep {
  name: string;
  /** One round; `signal` is aborted when the round is abandoned (see `withSweepLock`). */
  run(signal: AbortSignal): Promise<Record<string, number>>;
}

export interface SweepSchedulerOptions {
  intervalMs: number;
  redis: Redis;
  redisPrefix: string;
  log: Logger;
  sweeps: readonly Sweep[];
  /**
   * How long a crashed replica's sweep lock blocks the others, and how long one round of a sweep
   * may run before it is abandoned. Default 5 minutes.
   */
  lockTtlMs?: number;
}

/**
 * Runs each sweep every `intervalMs` in every replica; the Redis lock lets one replica at a time
 * do the work. A failed sweep is logged and tried again next period; one still running at its
 * lock's TTL (a store that never answers) is abandoned, so the next period starts a new round.
 * `stop` aborts the round in flight (its store calls end at once) and waits for what is left.
 */
export function startSweeps(opts: SweepSchedulerOptions): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  const stopping = new AbortController();
  const tick = () => {
    if (running || stopping.signal.aborted) return; // the previous round overran the period
    running = (async () => {
      for (const sweep of opts.sweeps) {
        if (stopping.signal.aborted) return;
        try {
          const key = sweepLockKey(opts.redisPrefix, sweep.name);
          const result = await withSweepLock(
            opts.redis,
            key,
            opts.lockTtlMs ?? 5 * 60_000,
            (signal) => sweep.run(signal),
            stopping.signal,
          );
          if (result && Object.values(result).some((n) => n > 0))
            opts.log.info({ sweep: sweep.name, ...result }, 'sweep done');
        } catch (error) {
          if (!stopping.signal.aborted)
            opts.log.error({ sweep: sweep.name, err: (error as Error).message }, 'sweep failed');
        }
      }
    })().finally(() => (running = null));
  };
  const timer = setInterval(tick, opts.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      stopping.abort();
      await running;
    },
  };
}
