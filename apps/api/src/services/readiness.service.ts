import { once } from 'node:events';
import type { Db } from '@hark/db';
import { withTimeout } from '@hark/http';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger';

export interface Readiness {
  postgres: boolean;
  redis: boolean;
}

/** GET /readyz: whether Postgres and Redis answer (each within `timeoutMs`, 2 s by default). */
export class ReadinessService {
  constructor(
    private readonly db: Db,
    private readonly redis: Redis,
    private readonly timeoutMs = 2000,
  ) {}

  /** `log`: where a failed check is reported (the request's logger). */
  async check(log: Logger): Promise<Readiness> {
    const [postgres, redis] = await Promise.all([
      this.answers(log, () => this.db.$queryRaw`SELECT 1`),
      this.answers(log, async (signal) => {
        // Through a Redis outage probes keep coming: the wait for 'ready' ends with the probe,
        // so no listener is left behind per probe.
        if (this.redis.status !== 'ready') await once(this.redis, 'ready', { signal });
        return this.redis.ping();
      }),
    ]);
    return { postgres, redis };
  }

  /** Whether `fn` settles successfully within the timeout; its `signal` ends with the check. */
  private async answers(log: Logger, fn: (signal: AbortSignal) => Promise<unknown>): Promise<boolean> {
    const done = new AbortController();
    try {
      await withTimeout(fn(done.signal), this.timeoutMs, 'readiness check');
      return true;
    } catch (err) {
      log.warn({ err }, 'readiness check failed');
      return false;
    } finally {
      done.abort();
    }
  }
}
