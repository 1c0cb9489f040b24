import { Redis, type RedisOptions } from 'ioredis';

/** Workers block on Redis: retry forever (BullMQ requires maxRetriesPerRequest: null). */
export function workerConnection(url: string, extra: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableReadyCheck: true, ...extra });
}

/** Producers fail fast so an API request never hangs on a Redis outage. */
export function producerConnection(url: string, extra: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, ...extra });
}
