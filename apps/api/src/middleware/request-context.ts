import { newRequestId } from '@hark/core';
import type { Express, Request, RequestHandler } from 'express';
import type { Logger } from '../logger';

/** Called once per request when its response has been sent (the metrics). */
export type FinishedHook = (req: Request, status: number, seconds: number) => void;

const LOG = Symbol('hark.requestLog');
type WithLog = Request & { [LOG]?: Logger };

/**
 * Gives every request of `app` an id (header `X-Request-Id` on every response) and `req.log`, a
 * logger carrying that id (made on first use: most requests only need their request line), and
 * logs one `request` line when its response has been sent. `onFinished` runs from the same
 * listener, with the same clock reading.
 */
export function requestContext(app: Express, logger: Logger, onFinished: FinishedHook): RequestHandler {
  Object.defineProperty(app.request, 'log', {
    configurable: true,
    get(this: WithLog): Logger {
      return (this[LOG] ??= logger.child({ requestId: this.id }));
    },
  });
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    req.id = newRequestId();
    res.setHeader('X-Request-Id', req.id);
    // The original path (the routers strip their mount paths from req.path), without the query.
    const url = req.originalUrl;
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      onFinished(req, res.statusCode, seconds);
      logger.info(
        {
          requestId: req.id,
          method: req.method,
          path,
          status: res.statusCode,
          durationMs: seconds * 1000,
          accountId: req.auth?.accountId,
        },
        'request',
      );
    });
    next();
  };
}
