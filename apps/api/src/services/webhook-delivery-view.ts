import type { WebhookDelivery } from '@hark/db';

/** The spec's Webhook delivery record: exactly these fields, in this order. */
export function deliveryRecord(d: WebhookDelivery) {
  return {
    id: d.id,
    transcriptId: d.transcriptId,
    url: d.url,
    attempt: d.attempt,
    delivered: d.delivered,
    statusCode: d.statusCode,
    error: d.error,
    responsePreview: d.responsePreview,
    durationMs: d.durationMs,
    manual: d.manual,
    createdAt: d.createdAt.toISOString(),
  };
}

export type DeliveryRecord = ReturnType<typeof deliveryRecord>;
