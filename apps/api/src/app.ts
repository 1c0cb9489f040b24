import express, { type Express, Router } from 'express';
import type { ApiDeps } from './context';
import { authenticate } from './middleware/auth';
import { errorHandler, notFound } from './middleware/errors';
import { SlidingWindowLimiter, rateLimits } from './middleware/rate-limit';
import { requestContext } from './middleware/request-context';
import { accountRoutes } from './routes/account.routes';
import { healthRoutes } from './routes/health.routes';
import { uploadRoutes } from './routes/upload.routes';
import { UploadLock } from './services/upload-lock';
import { UploadService } from './services/upload.service';

/** Builds the Express app without listening, so tests drive it with supertest. */
export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.use(requestContext(deps.logger));
  app.use(healthRoutes(deps));

  const limits = rateLimits(new SlidingWindowLimiter(deps.redis, deps.config.redisPrefix), {
    rules: deps.config.rateLimits,
    other: deps.config.otherRouteLimit,
  });
  const v1 = Router();
  v1.use(authenticate(deps, limits.unauthenticated));
  v1.use(accountRoutes(deps, limits.limit));
  const uploads = new UploadService(deps.db, deps.blobs, new UploadLock(deps.redis, deps.config.redisPrefix, deps.config.uploadLockTtlMs));
  v1.use(uploadRoutes(uploads, limits.limit));
  v1.use(limits.limit('unknown'), notFound);
  app.use('/v1', v1);

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
