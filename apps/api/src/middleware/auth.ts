import { HarkError, authorizationCredentials, hmacApiKey } from '@hark/core';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ApiDeps, AuthContext } from '../context';

/**
 * Bearer authentication (the scheme in any case, RFC 9110). Any missing, malformed, unknown or revoked key gets the same 401:
 * the presented key is HMAC'ed with the operator secret and looked up by that digest, so
 * nothing about stored keys (length, prefix) changes the answer or its timing profile.
 */
export function authenticate(
  deps: ApiDeps,
  onFailure: (req: Request, res: Response) => Promise<void>,
): RequestHandler {
  const cache = new Map<string, { auth: AuthContext | null; until: number }>();
  const cached = (digest: string): AuthContext | null | undefined => {
    const hit = cache.get(digest);
    return hit && hit.until > Date.now() ? hit.auth : undefined;
  };
  const lookup = async (digest: string): Promise<AuthContext | null> => {
    // A named (prepared once per connection) query on the pool, without Prisma's query building.
    const { rows } = await deps.pool.query<{ id: string; account_id: string; revoked_at: Date | null }>({
      name: 'hark_api_key_by_hmac',
      text: 'SELECT id, account_id, revoked_at FROM api_keys WHERE key_hmac = $1',
      values: [digest],
    });
    const row = rows[0];
    const auth = row && !row.revoked_at ? { accountId: row.account_id, apiKeyId: row.id } : null;
    if (deps.config.authCacheMs > 0) {
      if (cache.size > 10_000) cache.clear();
      cache.set(digest, { auth, until: Date.now() + deps.config.authCacheMs });
    }
    return auth;
  };
  const conclude = async (req: Request, res: Response, next: NextFunction, auth: AuthContext | null) => {
    if (auth) {
      req.auth = auth;
      return next();
    }
    // Unauthenticated responses still carry RateLimit-* headers (limited per client address).
    await onFailure(req, res);
    throw new HarkError('invalid_api_key');
  };

  // Synchronous when the key's look-up is cached (every request of a polling client).
  return (req, res, next) => {
    const key = authorizationCredentials(req.headers.authorization, 'Bearer');
    if (key === undefined || key.length > 512) return conclude(req, res, next, null);
    const digest = hmacApiKey(key, deps.config.secret);
    const hit = cached(digest);
    if (hit) {
      req.auth = hit;
      return next();
    }
    return hit === null
      ? conclude(req, res, next, null)
      : lookup(digest).then((auth) => conclude(req, res, next, auth));
  };
}
