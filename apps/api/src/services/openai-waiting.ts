import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * KEYS[1] the account's places (a sorted set: token -> expiry in ms, Redis clock). ARGV: token,
 * most places, ttl ms. Drops expired places (a replica that died holding them), then takes one
 * if fewer than the most are held: 1, else 0.
 */
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

/** KEYS as TAKE; ARGV: token, ttl ms. Moves the place's expiry on, if it is still held. */
const EXTEND = `
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;

export interface WaitingPlace {
  release(): Promise<void>;
}

/**
 * The places an account's requests on the OpenAI audio routes hold while they run (read the
 * file, wait for the transcript), counted across every API replica in Redis: at most
 * `perAccount` at once. A place lives `ttlMs` and is extended while its request runs, so those
 * of a replica that died are free again within `ttlMs`.
 */
export class OpenAiWaitingPlaces {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    readonly perAccount: number,
    private readonly ttlMs = 60_000,
  ) {}

  /** One of the account's places, or null when all are held. */
  async take(accountId: string): Promise<WaitingPlace | null> {
    const key = `${this.prefix}:openai-waiting:${accountId}`;
    const token = randomBytes(12).toString('hex');
    const taken = (await this.redis.eval(TAKE, 1, key, token, this.perAccount, this.ttlMs)) as number;
    if (taken !== 1) return null;
    const timer = setInterval(
      () => {
        this.redis.eval(EXTEND, 1, key, token, this.ttlMs).catch(() => undefined);
      },
      Math.floor(this.ttlMs / 3),
    );
    timer.unref();
    return {
      release: async () => {
        clearInterval(timer);
        await this.redis.zrem(key, token).catch(() => undefined);
      },
    };
  }
}
