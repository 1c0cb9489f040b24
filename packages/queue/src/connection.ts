import { Redis, type RedisOptions } from 'ioredis';

/** Workers block on Redis: retry forever (BullMQ requires maxRetriesPerRequest: null). */
export function workerConnection(url: string, extra: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, ...extra });
}

/** Producers fail fast so an API request never hangs on a Redis outage. */
export function producerConnection(url: string, extra: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, ...extra });
}

/** How a process runs its BullMQ worker (each app reads these from its own environment). */
export interface QueueTuning {
  concurrency: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  maxStalledCount: number;
}

/** BullMQ Worker options for `tuning` on `connection` under the key `prefix`. */
export function workerOptions(connection: Redis, prefix: string, tuning: QueueTuning) {
  return {
    connection,
    prefix,
    concurrency: tuning.concurrency,
    lockDuration: tuning.lockDurationMs,
    stalledInterval: tuning.stalledIntervalMs,
    maxStalledCount: tuning.maxStalledCount,
  };
}
