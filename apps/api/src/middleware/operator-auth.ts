import { HarkError, authorizationCredentials } from '@hark/core';
import { bearerMatches, tokenMatches } from '@hark/metrics';
import type { RequestHandler } from 'express';

/**
 * Operator pages: `Authorization: Bearer <token>` (scheme in any case, as for API keys), compared in constant time. A browser cannot
 * add a bearer header to the page's own requests, so HTTP Basic with the token as the password
 * (any user name) is accepted too, and a 401 invites the browser to ask for it.
 */
export function operatorAuth(token: string): RequestHandler {
  return (req, _res, next) => {
    const header = req.headers.authorization;
    if (bearerMatches(header, token) || tokenMatches(basicPassword(header), token)) return next();
    next(
      new HarkError('invalid_api_key', 'The operator token is missing or invalid.', undefined, {
        'WWW-Authenticate': 'Basic realm="Hark operator", charset="UTF-8"',
      }),
    );
  };
}

function basicPassword(header: string | undefined): string {
  const encoded = authorizationCredentials(header, 'Basic');
  if (!encoded || !/^[A-Za-z0-9+/=]{1,1024}$/.test(encoded)) return '';
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? '' : decoded.slice(colon + 1);
}
