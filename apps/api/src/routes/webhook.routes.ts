// GET /v1/transcripts/{id}/webhook-deliveries, POST /v1/transcripts/{id}/webhook-deliveries
import { Router, type RequestHandler } from 'express';
import type { ApiDeps } from '../context';
import { REPLAY_TIMEOUT_MS, WebhookReplayQueue } from '../services/webhook-delivery-replay';
import { WebhookDeliveryService } from '../services/webhook-delivery.service';

export interface WebhookRouteOptions {
  /** How long a replay waits for the dispatcher before 500 `internal`. Default 15 000 ms. */
  replayTimeoutMs?: number;
}

export function webhookRoutes(
  deps: ApiDeps,
  limit: (route: string) => RequestHandler,
  { replayTimeoutMs = REPLAY_TIMEOUT_MS }: WebhookRouteOptions = {},
): Router {
  const replays = new WebhookReplayQueue(deps.redis, deps.config.redisPrefix, replayTimeoutMs);
  const deliveries = new WebhookDeliveryService(deps.db, replays);
  const r = Router();

  r.get(
    '/transcripts/:id/webhook-deliveries',
    limit('GET /v1/transcripts/{id}/webhook-deliveries'),
    async (req, res) => {
      res.json({ data: await deliveries.list(req.auth!.accountId, String(req.params.id)) });
    },
  );

  // No request body is defined; anything sent is ignored.
  r.post(
    '/transcripts/:id/webhook-deliveries',
    limit('POST /v1/transcripts/{id}/webhook-deliveries'),
    async (req, res) => {
      res.status(201).json({ data: await deliveries.replay(req.auth!.accountId, String(req.params.id)) });
    },
  );
  return r;
}
