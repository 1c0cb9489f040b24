import type { IRouter, RequestHandler } from 'express';
import { type ApiRoute, type AuthKind, type RouteKey, expressPath, rateLimitKey } from './routes.contract';

/** The rate limiter of one route key (per account, or per client address on public routes). */
export type RouteLimit = (key: RouteKey) => RequestHandler;

export interface MountOptions {
  /** Handlers that run before the rate limiter (the OpenAI routes note the request's arrival). */
  before?: readonly RequestHandler[];
}

/**
 * Registers a contract route: its method, its Express path (from the contract path, relative to
 * where the router is mounted), its rate limiter (keyed by the contract), then the handlers.
 */
export type Mount = (
  route: ApiRoute,
  ...handlers: [MountOptions, ...RequestHandler[]] | RequestHandler[]
) => void;

export interface MounterOptions {
  /** Where `router` is mounted: `/v1` for the keyed router, `` for the app itself. */
  base: '' | '/v1';
  /** The routes this router serves; mounting a route of another kind fails at boot. */
  auth: AuthKind;
  /** The limiter for the routes' keys; not needed when `auth` is `none` (no limit). */
  limit?: RouteLimit;
}

export function mounter(router: IRouter, { base, auth, limit }: MounterOptions): Mount {
  return (route, ...rest) => {
    if (route.auth !== auth)
      throw new Error(`${route.operationId} is a route with auth "${route.auth}", not "${auth}"`);
    const [first, ...others] = rest;
    const options = typeof first === 'object' ? first : {};
    const handlers = (typeof first === 'object' ? others : rest) as RequestHandler[];
    const key = rateLimitKey(route);
    const limiter: RequestHandler[] = [];
    if (key !== null) {
      if (!limit) throw new Error(`${route.operationId} is rate-limited, but no limiter was given`);
      limiter.push(limit(key));
    }
    router[route.method](expressPath(route.path, base), ...(options.before ?? []), ...limiter, ...handlers);
  };
}

/** The mount of the routes of `/v1` that take an API key, on a router mounted at `/v1`. */
export function keyedMount(router: IRouter, limit: RouteLimit): Mount {
  return mounter(router, { base: '/v1', auth: 'key', limit });
}
