import { delayBeforeAttempt, webhookSchedule } from '@hark/webhooks';
import type { WebhookScheduleConfig } from './config';

/**
 * How long to wait before automatic attempt `attempt` (1-based), in ms, or null when the
 * schedule has no such attempt: give up. The decided schedule goes through @hark/webhooks'
 * `delayBeforeAttempt`; a configured one (tests) is read the same way.
 */
export function delayBefore(schedule: WebhookScheduleConfig, attempt: number): number | null {
  if (schedule.delaysMs === webhookSchedule.delaysMs) return delayBeforeAttempt(attempt, schedule.timeScale);
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new RangeError(`attempt must be an integer >= 1, got ${attempt}`);
  const delay = schedule.delaysMs[attempt - 1];
  return delay === undefined ? null : Math.round(delay * schedule.timeScale);
}
