// GET /v1/transcripts/{id}/webhook-deliveries, POST /v1/transcripts/{id}/webhook-deliveries
import { Router } from 'express';
import { type RouteLimit, keyedMount } from '../contract/mount';
import { ROUTE } from '../contract/routes.contract';
import type { WebhookDeliveryService } from '../services/webhook-delivery.service';

export function webhookRoutes(deliveries: WebhookDeliveryService, limit: RouteLimit): Router {
  const r = Router();
  const mount = keyedMount(r, limit);

  mount(ROUTE.listWebhookDeliveries, async (req, res) => {
    res.json({ data: await deliveries.list(req.auth!.accountId, String(req.params.id)) });
  });

  // No request body is defined; anything sent is ignored.
  mount(ROUTE.replayWebhook, async (req, res) => {
    res.status(201).json({ data: await deliveries.replay(req.auth!.accountId, String(req.params.id)) });
  });
  return r;
}
