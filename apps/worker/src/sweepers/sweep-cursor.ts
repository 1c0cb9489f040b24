import type { Redis } from 'ioredis';

/**
 * Where a paged sweep resumes: each run lists a few pages from here and leaves the cursor where
 * it stopped, so a run costs the same however large the store grows, and every page is reached
 * in turn. Null: from the start.
 */
export interface SweepCursor {
  get(): Promise<string | null>;
  set(cursor: string | null): Promise<void>;
}

/**
 * Kept in Redis beside the sweep locks, shared by the replicas (one sweeps at a time). Lost with
 * Redis, the listing starts over, which costs one pass and nothing else.
 */
export function redisSweepCursor(redis: Redis, redisPrefix: string, sweep: string): SweepCursor {
  const key = `${redisPrefix}:sweep-cursor:${sweep}`;
  return {
    get: () => redis.get(key),
    async set(cursor) {
      if (cursor === null) await redis.del(key);
      else await redis.set(key, cursor);
    },
  };
}

/** A cursor held in memory (one process; tests). */
export function memorySweepCursor(): SweepCursor & { value: string | null } {
  return {
    value: null,
    async get() {
      return this.value;
    },
    async set(cursor) {
      this.value = cursor;
    },
  };
}
