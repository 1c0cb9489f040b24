import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`;
const EXTEND = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;

/**
 * One writer per upload across all API replicas. The lock lives `ttlMs` and is extended while
 * bytes keep arriving, so a holder that died (process killed, connection dropped without
 * cleanup) frees it within `ttlMs`.
 */
export class UploadLock {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlMs = 30_000,
  ) {}

  async acquire(uploadId: string): Promise<{ release(): Promise<void> } | null> {
    const key = `${this.prefix}:upload-lock:${uploadId}`;
    const token = randomBytes(12).toString('hex');
    const ok = await this.redis.set(key, token, 'PX', this.ttlMs, 'NX');
    if (ok !== 'OK') return null;
    const timer = setInterval(() => {
      this.redis.eval(EXTEND, 1, key, token, this.ttlMs).catch(() => undefined);
    }, Math.floor(this.ttlMs / 3));
    timer.unref();
    return {
      release: async () => {
        clearInterval(timer);
        await this.redis.eval(RELEASE, 1, key, token).catch(() => undefined);
      },
    };
  }
}
