import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * KEYS[1] the upload's lock, KEYS[2] its account's in-flight reservations (a hash: upload id ->
 * "<bytes>:<expiry ms, Redis clock>"). ARGV: token, ttl ms, upload id, bytes to reserve.
 * Takes the lock or returns -1; then drops expired reservations, records this one and returns
 * the bytes the account's other writers have reserved.
 */
const ACQUIRE = `
if not redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return -1 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local others = 0
local entries = redis.call('HGETALL', KEYS[2])
for i = 1, #entries, 2 do
  if entries[i] ~= ARGV[3] then
    local bytes, expiry = string.match(entries[i + 1], '^(%d+):(%d+)$')
    if expiry and tonumber(expiry) > now then others = others + tonumber(bytes)
    else redis.call('HDEL', KEYS[2], entries[i]) end
  end
end
redis.call('HSET', KEYS[2], ARGV[3], ARGV[4] .. ':' .. (now + tonumber(ARGV[2])))
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return others`;

/** KEYS as ACQUIRE; ARGV: token, upload id. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('HDEL', KEYS[2], ARGV[2])
  return redis.call('DEL', KEYS[1])
end
return 0`;

/** KEYS as ACQUIRE; ARGV: token, ttl ms, upload id. */
const EXTEND = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local entry = redis.call('HGET', KEYS[2], ARGV[3])
if entry then
  redis.call('HSET', KEYS[2], ARGV[3], string.match(entry, '^(%d+):') .. ':' .. (now + tonumber(ARGV[2])))
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])`;

export interface HeldUploadLock {
  /**
   * Bytes the account's other writers (chunks to its other uploads, POST bodies) have reserved
   * and not yet released: they may land in Postgres after this writer reads the account's
   * usage, so the quota check counts them too.
   */
  othersReservedBytes: number;
  release(): Promise<void>;
}

/**
 * One writer per upload across all API replicas, and the account's in-flight bytes for the
 * upload quota. The lock lives `ttlMs` and is extended while its holder runs, so a holder that
 * died (process killed) frees it within `ttlMs`; its reservation expires with it. A holder whose
 * client stops sending is dropped by the upload service after `idleMs` (two thirds of `ttlMs`).
 * Taking the lock, reserving and reading the other reservations is one script run: the quota
 * costs no round trip of its own.
 */
export class UploadLock {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlMs = 30_000,
  ) {}

  /** How long a writer may go without receiving a byte before it is dropped (within the TTL). */
  get idleMs(): number {
    return Math.floor((this.ttlMs * 2) / 3);
  }

  /** Whether a writer holds the upload now. */
  async held(uploadId: string): Promise<boolean> {
    return (await this.redis.exists(this.lockKey(uploadId))) === 1;
  }

  private lockKey(uploadId: string): string {
    return `${this.prefix}:upload-lock:${uploadId}`;
  }

  /**
   * Waits up to `waitMs` for the upload's writer (if any) to finish: true once none holds it.
   * A status read during a write would report the length before the chunk, and a client that
   * resumed from it after losing the chunk's response would send those bytes twice.
   */
  async waitUntilFree(uploadId: string, waitMs: number): Promise<boolean> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      if (!(await this.held(uploadId))) return true;
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * Locks `uploadId` and reserves `reserveBytes` (at least what this write can add to the
   * account's held bytes) until release. Null when another writer holds the upload.
   */
  async acquire(uploadId: string, accountId: string, reserveBytes: number): Promise<HeldUploadLock | null> {
    const keys = [this.lockKey(uploadId), `${this.prefix}:upload-inflight:${accountId}`] as const;
    const token = randomBytes(12).toString('hex');
    const others = (await this.redis.eval(
      ACQUIRE,
      2,
      ...keys,
      token,
      this.ttlMs,
      uploadId,
      Math.max(0, Math.floor(reserveBytes)),
    )) as number;
    if (others < 0) return null;
    const timer = setInterval(
      () => {
        this.redis.eval(EXTEND, 2, ...keys, token, this.ttlMs, uploadId).catch(() => undefined);
      },
      Math.floor(this.ttlMs / 3),
    );
    timer.unref();
    return {
      othersReservedBytes: others,
      release: async () => {
        clearInterval(timer);
        await this.redis.eval(RELEASE, 2, ...keys, token, uploadId).catch(() => undefined);
      },
    };
  }
}
