import { once } from 'node:events';
import type { Db } from '@hark/db';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger';

export interface Readiness {
  postgres: boolean;
  redis: boolean;
}

/** GET /readyz: whether Postgres and Redis answer (each within 2 s). */
export class ReadinessService {
  constructor(
    private readonly db: Db,
    private readonly redis: Redis,
  ) {}

  /** `log`: where a failed check is reported (the request's logger). */
  async check(log: Logger): Promise<Readiness> {
    const check = async (fn: () => Promise<unknown>): Promise<boolean> => {
      try {
        await Promise.race([
          fn(),
          new Promise((_, rej) => setTimeout(() => rej(new Error('timeout')), 2000)),
        ]);
        return true;
      } catch (err) {
        log.warn({ err }, 'readiness check failed');
        return false;
      }
    };
    const [postgres, redis] = await Promise.all([
      check(() => this.db.$queryRaw`SELECT 1`),
      check(async () => {
        if (this.redis.status !== 'ready') await once(this.redis, 'ready');
        return this.redis.ping();
      }),
    ]);
    return { postgres, redis };
  }
}
