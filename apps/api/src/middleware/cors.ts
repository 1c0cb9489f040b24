import { ConfigError } from '@hark/core';
import type { RequestHandler } from 'express';

/** Origins allowed to call the API from a browser page of theirs: a list, or any (`*`). */
export type CorsOrigins = readonly string[] | '*';

/**
 * Response headers a page may read: the request id and the rate-limit headers, and what the
 * OpenAI clients read to decide on a retry (`Retry-After`, `x-should-retry`).
 */
export const EXPOSED_HEADERS = [
  'X-Request-Id',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Retry-After',
  'x-should-retry',
  'Location',
].join(', ');

const METHODS = 'GET, POST, PUT, DELETE';

/**
 * Cross-origin calls from the configured origins (`HARK_CORS_ORIGINS`; none by default, so a page
 * on another origin is refused by its browser, as before). The key travels in `Authorization`,
 * never in a cookie, so no credentials are allowed and any header the page asks to send is
 * (the OpenAI clients send their own `x-stainless-*` ones). A preflight from an allowed origin is
 * answered here, before authentication (browsers send it without the key); anything else goes on.
 */
export function cors(origins: CorsOrigins): RequestHandler {
  const allowOrigin = originMatcher(origins);
  return (req, res, next) => {
    // With a list, the answer depends on Origin whether or not this one is allowed: without Vary,
    // a shared cache could hand an allowed page the answer stored for a request with no Origin
    // (no Access-Control-Allow-Origin), which its browser then refuses.
    if (variesOnOrigin(origins)) res.vary('Origin');
    const allowed = allowOrigin(req.get('Origin'));
    if (allowed === null) return next();
    res.setHeader('Access-Control-Allow-Origin', allowed);
    const preflight = req.method === 'OPTIONS' && req.get('Access-Control-Request-Method') !== undefined;
    if (!preflight) {
      res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
      return next();
    }
    res.setHeader('Access-Control-Allow-Methods', METHODS);
    const asked = req.get('Access-Control-Request-Headers');
    if (asked) {
      res.setHeader('Access-Control-Allow-Headers', asked);
      res.vary('Access-Control-Request-Headers');
    }
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
  };
}

/**
 * The `Access-Control-Allow-Origin` value for a request's Origin (`*`, or the origin itself when
 * listed), or null when it may not read the answer. Shared with the HTTP parser's own answers
 * (client-errors.ts), so both allow exactly the same pages.
 */
export function originMatcher(origins: CorsOrigins): (origin: string | undefined) => string | null {
  if (origins === '*') return () => '*';
  const allowed = new Set(origins);
  return (origin) => (origin !== undefined && allowed.has(origin) ? origin : null);
}

/** Whether answers must say `Vary: Origin`: with `*` or no origins they never depend on it. */
export function variesOnOrigin(origins: CorsOrigins): boolean {
  return origins !== '*' && origins.length > 0;
}

/**
 * `HARK_CORS_ORIGINS`: unset or empty, none; `*`, any; else a comma-separated list of origins
 * (`https://app.example.com`, scheme, host and port only, as browsers send them).
 */
export function parseCorsOrigins(value: string | undefined): CorsOrigins {
  const v = (value ?? '').trim();
  if (v === '*') return '*';
  if (v === '') return [];
  return v.split(',').map((o) => {
    const origin = o.trim();
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      throw new ConfigError(`HARK_CORS_ORIGINS: "${origin}" is not an origin (https://host[:port])`);
    }
    if (!/^https?:$/.test(url.protocol) || url.origin !== origin) {
      throw new ConfigError(`HARK_CORS_ORIGINS: "${origin}" is not an origin (https://host[:port], no path)`);
    }
    return origin;
  });
}
