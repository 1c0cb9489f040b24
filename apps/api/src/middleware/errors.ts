import { HarkError, errorBody, isHarkError } from '@hark/core';
import type { ErrorRequestHandler, RequestHandler } from 'express';

/** Unknown routes answer like every other failure. */
export const notFound: RequestHandler = (_req, _res, next) => {
  next(new HarkError('not_found', 'No such route.'));
};

interface BodyParserError extends Error {
  type?: string;
  status?: number;
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
      return new HarkError('internal');
  }
}
