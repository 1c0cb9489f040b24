import { type WebhookProducer, transcriptDoneChannel } from '@hark/queue';
import type { Redis } from 'ioredis';

export interface AnnounceDeps {
  /** Any non-subscriber connection. */
  redis: Redis;
  redisPrefix: string;
  webhooks: Pick<WebhookProducer, 'enqueueAttempt'>;
}

/**
 * Tells the rest of the system that a transcript reached `done` or `failed`: wakes `GET ?wait=`
 * (pub/sub) and, when the caller gave a `webhookUrl`, hands attempt 1 to the dispatcher.
 *
 * Safe to repeat, which is how a lost announcement is recovered (a re-run of the job finds the
 * transcript finished and announces again): a second publish wakes nobody new, and the webhook
 * job id `<id>-attempt-1` collapses while the first job is kept (WEBHOOK_JOB_OPTIONS); past
 * that, the dispatcher's unique (transcript, attempt) delivery record stops a second send.
 * Never called for `canceled` (no notice for cancels; the API wakes its own waiters).
 */
export async function announceFinished(
  deps: AnnounceDeps,
  transcriptId: string,
  webhookUrl: string | null,
): Promise<void> {
  if (webhookUrl) await deps.webhooks.enqueueAttempt(transcriptId, 1);
  // After the enqueue: whoever wakes up and reads the transcript may look for its delivery.
  await deps.redis.publish(transcriptDoneChannel(deps.redisPrefix), transcriptId);
}
