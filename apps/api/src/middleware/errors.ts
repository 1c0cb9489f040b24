import { HarkError, errorBody, isHarkError } from '@hark/core';
import { isBlobStoreUnavailable } from '@hark/storage';
import type { ErrorRequestHandler, RequestHandler } from 'express';

/** Unknown routes answer like every other failure. */
export const notFound: RequestHandler = (_req, _res, next) => {
  next(new HarkError('not_found', 'No such route.'));
};

interface BodyParserError extends Error {
  type?: string;
  status?: number;
}

/**
 * A path Express cannot percent-decode (`/v1/uploads/%ZZ`) names nothing: 404 like an unknown
 * id, after the route's usual rate limit (`limit`), instead of the router's decode error (500).
 */
export function undecodablePath(limit: RequestHandler): RequestHandler {
  return (req, res, next) => {
    try {
      decodeURIComponent(req.path);
      return next();
    } catch {
      const upload = req.path.startsWith('/uploads/');
      if (upload) res.setHeader('Cache-Control', 'no-store'); // as on every upload route
      const code = upload ? 'upload_not_found' : 'not_found';
      return Promise.resolve(limit(req, res, () => next(new HarkError(code)))).catch(next);
    }
  };
}

/** Maps anything thrown to the envelope. Unknown errors are 500 `internal`, logged, never echoed. */
export const errorHandler: ErrorRequestHandler = (err: unknown, req, res, _next) => {
  const e = toHarkError(err);
  if (e.status >= 500) req.log.error({ err }, 'unhandled error');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const [k, v] of Object.entries(e.headers ?? {})) res.setHeader(k, v);
  res.status(e.status).json(errorBody(e, req.id));
};

function toHarkError(err: unknown): HarkError {
  if (isHarkError(err)) return err;
  // The object store failed transiently (after the SDK's own retries): nothing was recorded,
  // and the same request can succeed later.
  if (isBlobStoreUnavailable(err))
    return new HarkError('unavailable', 'Upload storage is temporarily unavailable; retry later.');
  const bp = err as BodyParserError;
  switch (bp?.type) {
    case 'entity.parse.failed':
      return HarkError.validation({ body: 'body_invalid' });
    case 'entity.too.large':
      return new HarkError('payload_too_large');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return HarkError.validation({ body: 'body_invalid' });
    case 'request.aborted':
      return HarkError.validation({ body: 'body_incomplete' });
    default:
      // Any other refusal of the body by the parsers (a corrupt gzip or deflate stream, say).
      if (bp instanceof Error && bp.status === 400) return HarkError.validation({ body: 'body_invalid' });
      return new HarkError('internal');
  }
}
