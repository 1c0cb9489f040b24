import { ConfigError } from '@hark/core';
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

/**
 * Resolves once `redis` is ready. Rejects after `timeoutMs` with an error naming REDIS_URL (its
 * host and port, never its password) and the last connection error: a process whose Redis never
 * answers stops, where the worker and the dispatcher used to wait for ever.
 */
export function waitForRedis(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    let last = '';
    const onError = (err: Error) => {
      last = err.message;
    };
    const onReady = () => {
      cleanup();
      resolve();
    };
    const timer = setTimeout(() => {
      cleanup();
      const where = `${redis.options.host ?? '?'}:${redis.options.port ?? '?'}`;
      const why = last ? ` (${last})` : '';
      reject(
        new ConfigError(`REDIS_URL: Redis at ${where} did not answer within ${timeoutMs / 1000} s${why}`),
      );
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      redis.off('error', onError);
      redis.off('ready', onReady);
    };
    redis.on('error', onError);
    redis.once('ready', onReady);
  });
}

/**
 * `log(err, skipped)` at most once every `everyMs`, with how many errors were left out since:
 * while Redis is away, ioredis and BullMQ report every retry, several a second, for as long as
 * the outage lasts.
 */
export function atMostEvery(
  everyMs: number,
  log: (err: Error, skipped: number) => void,
): (err: Error) => void {
  let lastAt = -Infinity;
  let skipped = 0;
  return (err) => {
    const now = Date.now();
    if (now - lastAt < everyMs) {
      skipped++;
      return;
    }
    log(err, skipped);
    lastAt = now;
    skipped = 0;
  };
}

/** A connection's errors logged as `msg`, at most once every 10 s (`atMostEvery`). */
export function logRedisErrors(
  redis: Redis,
  warn: (fields: Record<string, unknown>, msg: string) => void,
  msg = 'redis error',
): void {
  redis.on(
    'error',
    atMostEvery(10_000, (err, skipped) =>
      warn({ err: err.message, ...(skipped > 0 ? { skipped } : {}) }, msg),
    ),
  );
}
