import { checkPublicUrl } from '@hark/http';
import { ChosenUploadHashing } from '@hark/storage';
import { transcriptDoneChannel } from '@hark/queue';
import express, { type Express, Router } from 'express';
import type { ApiDeps } from './context';
import { authenticate } from './middleware/auth';
import { errorHandler, notFound, undecodablePath } from './middleware/errors';
import { ApiMetrics, trackRouteTemplates } from './middleware/http-metrics';
import { SlidingWindowLimiter, rateLimits } from './middleware/rate-limit';
import { requestContext } from './middleware/request-context';
import { responseContract } from './middleware/response-contract';
import { accountRoutes } from './routes/account.routes';
import { healthRoutes } from './routes/health.routes';
import { metricsRoutes } from './routes/metrics.routes';
import { openAiErrorHandler, openAiRoutes } from './routes/openai.routes';
import { openapiRoutes } from './routes/openapi.routes';
import { QUEUE_BOARD_PATH, queueBoard } from './routes/queue-board.routes';
import { subtitleRoutes } from './routes/subtitle.routes';
import { transcriptRoutes } from './routes/transcript.routes';
import { tryPageRoutes } from './routes/try-page.routes';
import { uploadRoutes } from './routes/upload.routes';
import { webhookRoutes } from './routes/webhook.routes';
import { CompletionWaiter } from './services/completion-waiter';
import { ListCursorCodec } from './services/list-cursor';
import { OpenAiAudioService } from './services/openai-audio.service';
import { SubtitleService } from './services/subtitle.service';
import { TranscriptListService } from './services/transcript-list.service';
import { TranscriptQueue } from './services/transcript-queue';
import { TranscriptService } from './services/transcript.service';
import { UploadLock } from './services/upload-lock';
import { UploadService } from './services/upload.service';

export type HarkApp = Express & {
  /** Shutdown has begun: readiness answers 503 and every response carries `Connection: close`. */
  beginDrain(): void;
  close(): Promise<void>;
};

/** Builds the Express app without listening, so tests drive it with supertest. */
export function createApp(deps: ApiDeps): HarkApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  const metrics = deps.metrics ?? new ApiMetrics();
  trackRouteTemplates(app);
  app.use(requestContext(app, deps.logger, metrics.record));
  // Operator endpoints, outside /v1 and its OpenAPI contract. The queue board is off unless an
  // operator token is configured (never with an empty one).
  metricsRoutes(app, metrics.registry, deps.config.metricsToken); // plain routes: one cheap path test each
  const board = deps.config.operatorToken
    ? queueBoard(deps.redis, deps.config.redisPrefix, deps.config.operatorToken)
    : null;
  if (board) app.use(QUEUE_BOARD_PATH, ...board.handlers);
  if (deps.config.validateResponses) app.use(responseContract());
  const lifecycle = { draining: false };
  app.use((_req, res, next) => {
    if (lifecycle.draining) res.setHeader('Connection', 'close');
    next();
  });
  healthRoutes(app, deps, lifecycle);
  tryPageRoutes(app); // the browser page at / and /try: static, no key; it calls /v1 like any client

  const limits = rateLimits(new SlidingWindowLimiter(deps.redis, deps.config.redisPrefix), {
    rules: deps.config.rateLimits,
    other: deps.config.otherRouteLimit,
  });
  openapiRoutes(app, limits.byAddress('GET /v1/openapi.json'));
  const v1 = Router();
  v1.use(authenticate(deps, limits.unauthenticated));
  v1.use(undecodablePath(limits.limit('unknown')));
  v1.use(accountRoutes(deps, limits.limit));
  const uploadHashing = deps.uploadHashing ?? new ChosenUploadHashing(deps.config.uploadHasher);
  const uploadLock = new UploadLock(deps.redis, deps.config.redisPrefix, deps.config.uploadLockTtlMs);
  const uploads = new UploadService(deps.db, deps.blobs, uploadLock, uploadHashing, {
    quotaBytes: deps.config.uploadQuotaBytes,
    noCreditBytes: deps.config.uploadNoCreditBytes,
  });
  v1.use(uploadRoutes(uploads, limits.limit));
  const { config } = deps;
  const queue = new TranscriptQueue(deps.redis, config.redisPrefix);
  const waiter = new CompletionWaiter(
    // Subscribers must queue commands until connected, whatever the producer connection does.
    deps.redis.duplicate({ lazyConnect: true, enableOfflineQueue: true, maxRetriesPerRequest: null }),
    transcriptDoneChannel(config.redisPrefix),
  );
  const transcripts = new TranscriptService(deps.db, queue, waiter, deps.blobs, {
    ratePerHour: config.ratePerHour,
    speakersRatePerHour: config.speakersRatePerHour,
    provisionalHoldSeconds: config.provisionalHoldSeconds,
    queuedPerAccount: config.queuedPerAccount,
    modelName: config.modelName,
    isAllowedWebhookUrl: async (url) =>
      (await checkPublicUrl(url, { allowPrivate: config.allowPrivateUrls })).ok,
  });
  const lists = new TranscriptListService(deps.db, new ListCursorCodec(config.secret));
  v1.use(transcriptRoutes(transcripts, lists, limits.limit, config.maxJsonBodyBytes));
  v1.use(webhookRoutes(deps, limits.limit));
  v1.use(
    subtitleRoutes(
      new SubtitleService(deps.db, (a, id) => transcripts.retryAfterSeconds(a, id)),
      limits.limit,
    ),
  );
  // OpenAI-compatible audio routes: ordinary transcripts underneath, errors in OpenAI's shape.
  const draining = new AbortController();
  const audio = new OpenAiAudioService(deps.db, uploads, transcripts, {
    models: ['whisper-1', config.modelName],
    waitSeconds: config.openaiWaitSeconds,
    draining: draining.signal,
  });
  v1.use(openAiRoutes(audio, limits.limit, config.openaiMaxFileBytes));
  v1.use(limits.limit('unknown'), notFound);
  v1.use(openAiErrorHandler);
  app.use('/v1', v1);

  app.use(notFound);
  app.use(errorHandler);
  return Object.assign(app, {
    beginDrain: () => {
      lifecycle.draining = true;
      draining.abort();
    },
    close: async () => {
      await Promise.allSettled([waiter.close(), queue.close(), board?.close(), uploadHashing.close()]);
    },
  });
}
