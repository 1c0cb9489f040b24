import type { Redis } from 'ioredis';
import type { Request, RequestHandler, Response } from 'express';
import { CallBatcher, HarkError } from '@hark/core';
import { ROUTE_KEYS, type RouteKey } from '../contract/routes.contract';

/**
 * A true sliding-window log in Redis, shared by every API replica: one sorted set per
 * (subject, route) holding the timestamps of admitted requests. Refused requests are not
 * recorded, so a refusal has no side effect. Redis' own clock is the only clock.
 *
 * One script run decides a batch of hits (KEYS[i] with ARGV max, window, member per hit), one
 * after another exactly as separate runs would, atomically.
 */
const SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local out = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local max = tonumber(ARGV[3 * i - 2])
  local windowUs = tonumber(ARGV[3 * i - 1])
  local member = ARGV[3 * i]
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - windowUs)
  local count = redis.call('ZCARD', key)
  local allowed = 0
  if count < max then
    redis.call('ZADD', key, now, now .. ':' .. member)
    count = count + 1
    allowed = 1
  end
  redis.call('PEXPIRE', key, math.ceil(windowUs / 1000) + 1000)
  local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  local resetUs = 0
  if oldest[2] then resetUs = tonumber(oldest[2]) + windowUs - now end
  out[3 * i - 2] = allowed
  out[3 * i - 1] = max - count
  out[3 * i] = resetUs
end
return out
`;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the next slot opens (the oldest admitted request leaves the window). */
  resetSeconds: number;
}

interface Hit {
  key: string;
  max: number;
  windowUs: number;
  member: string;
}

type BatchScript = (numKeys: number, ...keysAndArgs: (string | number)[]) => Promise<number[]>;

export class SlidingWindowLimiter {
  private seq = 0;
  /** The hits of one event-loop turn go to Redis as one script run. */
  private readonly hits: CallBatcher<Hit, RateDecision>;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    // defineCommand sends EVALSHA and falls back to EVAL once per connection; the number of
    // keys is the first argument of each call.
    if (!('harkSlidingWindowBatch' in redis)) redis.defineCommand('harkSlidingWindowBatch', { lua: SCRIPT });
    const script = (redis as unknown as { harkSlidingWindowBatch: BatchScript }).harkSlidingWindowBatch;
    this.hits = new CallBatcher(
      async (hits) => {
        const args = hits.flatMap((h) => [h.max, h.windowUs, h.member]);
        const out = await script.call(redis, hits.length, ...hits.map((h) => h.key), ...args);
        if (out.length !== 3 * hits.length)
          throw new Error(`rate-limit script answered ${out.length} values for ${hits.length} hits`);
        return hits.map((h, i) => decision(h.max, out[3 * i]!, out[3 * i + 1]!, out[3 * i + 2]!));
      },
      { maxBatch: 128 },
    );
  }

  hit(subject: string, route: string, max: number, windowSeconds: number): Promise<RateDecision> {
    return this.hits.call({
      key: `${this.prefix}:rl:${route}:${subject}`,
      max,
      windowUs: windowSeconds * 1_000_000,
      member: `${process.pid}:${++this.seq}:${Math.random().toString(36).slice(2, 8)}`,
    });
  }
}

function decision(max: number, allowed: number, remaining: number, resetUs: number): RateDecision {
  return {
    allowed: allowed === 1,
    limit: max,
    remaining: Math.max(0, remaining),
    resetSeconds: Math.max(allowed === 1 ? 0 : 1, Math.ceil(resetUs / 1_000_000)),
  };
}

/** What the limiter counts under: a contract route's key, or one of its own two. */
export type LimitKey = RouteKey | 'unknown' | 'unauthenticated';

export interface RouteLimits {
  rules: readonly { endpoint: RouteKey; max: number; windowSeconds: number }[];
  other: { max: number; windowSeconds: number };
}

function setHeaders(res: Response, d: RateDecision): void {
  res.setHeader('RateLimit-Limit', String(d.limit));
  res.setHeader('RateLimit-Remaining', String(d.remaining));
  res.setHeader('RateLimit-Reset', String(d.resetSeconds));
}

/**
 * `limit("POST /v1/transcripts")` limits per account and route (the key the route contract
 * derives; `unknown` for requests no route matched). Routes without a rule in the spec's table
 * get the `other` limit, each route counted on its own. A rule naming no route of the contract
 * fails here, at boot.
 */
export function rateLimits(limiter: SlidingWindowLimiter, limits: RouteLimits) {
  for (const rule of limits.rules) {
    if (!ROUTE_KEYS.has(rule.endpoint))
      throw new Error(`rate-limit rule for "${String(rule.endpoint)}": no such rate-limited route`);
  }
  /** The check for one route, its rule looked up once (when the route is defined). */
  const forRoute = (route: LimitKey) => {
    const rule = limits.rules.find((r) => r.endpoint === route) ?? limits.other;
    return async (subject: string, res: Response): Promise<void> => {
      const d = await limiter.hit(subject, route, rule.max, rule.windowSeconds);
      setHeaders(res, d);
      if (!d.allowed) {
        throw new HarkError('rate_limited', undefined, undefined, { 'Retry-After': String(d.resetSeconds) });
      }
    };
  };
  const byIp = (req: Request) => `ip:${req.ip ?? 'unknown'}`;
  const unauthenticated = forRoute('unauthenticated');
  return {
    limit(route: RouteKey | 'unknown'): RequestHandler {
      const check = forRoute(route);
      return async (req, res, next) => {
        await check(`acct:${req.auth?.accountId ?? 'none'}`, res);
        next();
      };
    },
    /** Public routes (no key): limited per client address and route. */
    byAddress(route: RouteKey): RequestHandler {
      const check = forRoute(route);
      return async (req, res, next) => {
        await check(byIp(req), res);
        next();
      };
    },
    /** For requests that failed authentication: limited per client address. */
    unauthenticated: (req: Request, res: Response) => unauthenticated(byIp(req), res),
  };
}
