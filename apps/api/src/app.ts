import express, { type Express, Router } from 'express';
import { composeServices } from './composition';
import type { ApiDeps } from './context';
import { authenticate } from './middleware/auth';
import { cors } from './middleware/cors';
import { audioFormReader, fieldBodyParsers } from './middleware/body-parsers';
import { errorHandler, notFound, undecodablePath } from './middleware/errors';
import { ApiMetrics, trackRouteTemplates } from './middleware/http-metrics';
import { rateLimits } from './middleware/rate-limit';
import { requestContext } from './middleware/request-context';
import { responseContract } from './middleware/response-contract';
import { accountRoutes } from './routes/account.routes';
import { healthRoutes } from './routes/health.routes';
import { metricsRoutes } from './routes/metrics.routes';
import { openAiErrorHandler, openAiRoutes } from './routes/openai.routes';
import { openapiRoutes } from './routes/openapi.routes';
import { QUEUE_BOARD_PATH } from './routes/queue-board.routes';
import { subtitleRoutes } from './routes/subtitle.routes';
import { transcriptRoutes } from './routes/transcript.routes';
import { tryPageRoutes } from './routes/try-page.routes';
import { uploadRoutes } from './routes/upload.routes';
import { webhookRoutes } from './routes/webhook.routes';

export type HarkApp = Express & {
  /** Shutdown has begun: readiness answers 503 and every response carries `Connection: close`. */
  beginDrain(): void;
  close(): Promise<void>;
};

/**
 * Builds the Express app without listening, so tests drive it with supertest. The services come
 * from the composition root (`composition.ts`); this wires middleware and routes, each route
 * mounted from the route contract (`contract/`).
 */
export function createApp(deps: ApiDeps): HarkApp {
  const { config } = deps;
  const services = composeServices(deps);
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  const metrics = deps.metrics ?? new ApiMetrics();
  trackRouteTemplates(app);
  app.use(requestContext(app, deps.logger, metrics.record));
  // Operator endpoints, outside /v1 and its OpenAPI contract. The queue board is off unless an
  // operator token is configured (never with an empty one).
  metricsRoutes(app, metrics.registry, config.metricsToken); // plain routes: one cheap path test each
  if (services.board) app.use(QUEUE_BOARD_PATH, ...services.board.handlers);
  if (config.validateResponses) app.use(responseContract());
  const lifecycle = { draining: false };
  app.use((_req, res, next) => {
    if (lifecycle.draining) res.setHeader('Connection', 'close');
    next();
  });
  healthRoutes(app, services.readiness, lifecycle);
  tryPageRoutes(app); // the browser page at / and /try: static, no key; it calls /v1 like any client

  const limits = rateLimits(services.limiter, { rules: config.rateLimits, other: config.otherRouteLimit });
  // Pages of the configured origins may call /v1 (the document included); their preflights are
  // answered before the key is asked for.
  app.use('/v1', cors(config.corsOrigins));
  openapiRoutes(app, limits.byAddress);
  const v1 = Router();
  v1.use(authenticate(deps, limits.unauthenticated));
  v1.use(undecodablePath(limits.limit('unknown')));
  v1.use(accountRoutes(services.balances, services.limits, limits.limit));
  v1.use(uploadRoutes(services.uploads, limits.limit));
  v1.use(
    transcriptRoutes(
      services.transcripts,
      services.lists,
      limits.limit,
      fieldBodyParsers(config.maxJsonBodyBytes),
    ),
  );
  v1.use(webhookRoutes(services.deliveries, limits.limit));
  v1.use(subtitleRoutes(services.subtitles, limits.limit));
  // OpenAI-compatible audio routes: errors in OpenAI's shape.
  v1.use(
    openAiRoutes(
      services.audio,
      limits.limit,
      audioFormReader(config.openaiMaxFileBytes, services.uploads.bodyIdleMs),
    ),
  );
  v1.use(limits.limit('unknown'), notFound);
  v1.use(openAiErrorHandler);
  app.use('/v1', v1);

  app.use(notFound);
  app.use(errorHandler);
  return Object.assign(app, {
    beginDrain: () => {
      lifecycle.draining = true;
      services.beginDrain();
    },
    close: () => services.close(),
  });
}
