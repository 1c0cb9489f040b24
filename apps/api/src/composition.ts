import { checkPublicUrl } from '@hark/http';
import { transcriptDoneChannel } from '@hark/queue';
import { ChosenUploadHashing } from '@hark/storage';
import type { ApiDeps } from './context';
import { SlidingWindowLimiter } from './middleware/rate-limit';
import { type QueueBoard, queueBoard } from './routes/queue-board.routes';
import { BalanceService } from './services/balance.service';
import { CompletionWaiter } from './services/completion-waiter';
import { LimitsService } from './services/limits.service';
import { ListCursorCodec } from './services/list-cursor';
import { OpenAiAudioService } from './services/openai-audio.service';
import { OpenAiWaitingPlaces } from './services/openai-waiting';
import { ReadinessService } from './services/readiness.service';
import { SubtitleService } from './services/subtitle.service';
import { TranscriptListService } from './services/transcript-list.service';
import { TranscriptQueue } from './services/transcript-queue';
import { TranscriptService } from './services/transcript.service';
import { UploadLock } from './services/upload-lock';
import { UploadService } from './services/upload.service';
import { WebhookReplayQueue } from './services/webhook-delivery-replay';
import { WebhookDeliveryService } from './services/webhook-delivery.service';

/** Every service of the API, each built once from the dependencies; routes receive these only. */
export interface ApiServices {
  limiter: SlidingWindowLimiter;
  readiness: ReadinessService;
  balances: BalanceService;
  limits: LimitsService;
  uploads: UploadService;
  transcripts: TranscriptService;
  lists: TranscriptListService;
  subtitles: SubtitleService;
  deliveries: WebhookDeliveryService;
  audio: OpenAiAudioService;
  /** The read-only queue dashboard, when an operator token is configured (never with an empty one). */
  board: QueueBoard | null;
  /** Shutdown has begun: waiting requests (`GET /v1/transcripts/{id}?wait=`, the OpenAI routes) answer at once. */
  beginDrain(): void;
  close(): Promise<void>;
}

/** The composition root: builds the services the app's routes and middleware use. */
export function composeServices(deps: ApiDeps): ApiServices {
  const { config } = deps;
  const uploadHashing = deps.uploadHashing ?? new ChosenUploadHashing(config.uploadHasher);
  const uploadLock = new UploadLock(deps.redis, config.redisPrefix, config.uploadLockTtlMs);
  const uploads = new UploadService(deps.db, deps.blobs, uploadLock, uploadHashing, {
    quotaBytes: config.uploadQuotaBytes,
    noCreditBytes: config.uploadNoCreditBytes,
  });
  const queue = new TranscriptQueue(deps.redis, config.redisPrefix);
  // Aborted when shutdown begins: requests waiting (long-polls, the OpenAI routes) answer at once.
  const draining = new AbortController();
  const waiter = new CompletionWaiter(
    // Subscribers must queue commands until connected, whatever the producer connection does.
    deps.redis.duplicate({ lazyConnect: true, enableOfflineQueue: true, maxRetriesPerRequest: null }),
    transcriptDoneChannel(config.redisPrefix),
    draining.signal,
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
  const replays = new WebhookReplayQueue(deps.redis, config.redisPrefix);
  const board = config.operatorToken
    ? queueBoard(deps.redis, config.redisPrefix, config.operatorToken)
    : null;
  return {
    limiter: new SlidingWindowLimiter(deps.redis, config.redisPrefix),
    readiness: new ReadinessService(deps.db, deps.redis),
    balances: new BalanceService(deps.pool),
    limits: new LimitsService(deps.db, config),
    uploads,
    transcripts,
    lists: new TranscriptListService(deps.db, new ListCursorCodec(config.secret)),
    subtitles: new SubtitleService(deps.db, (a, id) => transcripts.retryAfterSeconds(a, id)),
    deliveries: new WebhookDeliveryService(deps.db, replays),
    // OpenAI-compatible audio routes: ordinary transcripts underneath.
    audio: new OpenAiAudioService(
      deps.db,
      uploads,
      transcripts,
      new OpenAiWaitingPlaces(deps.redis, config.redisPrefix, config.openaiWaitingPerAccount),
      {
        models: ['whisper-1', config.modelName],
        waitSeconds: config.openaiWaitSeconds,
        draining: draining.signal,
      },
    ),
    board,
    beginDrain: () => draining.abort(),
    close: async () => {
      await Promise.allSettled([
        waiter.close(),
        queue.close(),
        replays.close(),
        board?.close(),
        uploadHashing.close(),
      ]);
    },
  };
}
