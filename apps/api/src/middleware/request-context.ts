import { newRequestId } from '@hark/core';
import type { RequestHandler } from 'express';
import type { Logger } from '../logger';

/** Gives every request an id (header `X-Request-Id` on every response) and a child logger. */
export function requestContext(logger: Logger): RequestHandler {
  return (req, res, next) => {
    req.id = newRequestId();
    req.log = logger.child({ requestId: req.id });
    res.setHeader('X-Request-Id', req.id);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      req.log.info(
        {
          method: req.method,
          path: req.path,
          status: res.statusCode,
          durationMs: Number(process.hrtime.bigint() - started) / 1e6,
          accountId: req.auth?.accountId,
        },
        'request',
      );
    });
    next();
  };
}
