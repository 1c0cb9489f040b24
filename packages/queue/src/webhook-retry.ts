const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Automatic completion-notice schedule (decisions, Webhooks): attempt 1 at once, then retries
 * after 30 s, 1 min, 5 min, 10 min, 30 min, 1 h, 1 h, 2 h, 2 h, 2 h; 11 attempts, then give up.
 * Worst case from the first attempt to the last: 31 590 s = 8 h 46 min 30 s of waiting (plus
 * up to 11 x 10 s of request time-outs), the spec's "about 9 hours".
 *
 * Manual replays are outside this schedule: they continue the attempt count but are sent once.
 */
export const webhookSchedule = {
  /** `delaysMs[i]` is the wait before attempt `i + 1`, measured from the end of attempt `i`. */
  delaysMs: [
    0,
    30 * SECOND,
    MINUTE,
    5 * MINUTE,
    10 * MINUTE,
    30 * MINUTE,
    HOUR,
    HOUR,
    2 * HOUR,
    2 * HOUR,
    2 * HOUR,
  ],
  /** Automatic attempts in all, the first included. */
  maxAttempts: 11,
  /** Sum of all delays: 31 590 000 ms (8 h 46 min 30 s). */
  totalDelayMs: 31_590_000,
} as const;

/**
 * How long to wait before automatic attempt `attempt` (1-based), in ms, scaled by `timeScale`
 * (tests pass e.g. 0.001 to run the whole schedule in about 32 s; production uses 1). Null when
 * `attempt` is past {@link webhookSchedule.maxAttempts}: stop retrying.
 */
export function delayBeforeAttempt(attempt: number, timeScale = 1): number | null {
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new RangeError(`attempt must be an integer >= 1, got ${attempt}`);
  if (!Number.isFinite(timeScale) || timeScale < 0)
    throw new RangeError(`timeScale must be >= 0, got ${timeScale}`);
  const delay = webhookSchedule.delaysMs[attempt - 1];
  return delay === undefined ? null : Math.round(delay * timeScale);
}

/** Max automatic attempts, for callers that want the number alone. */
export const maxAttempts = webhookSchedule.maxAttempts;

/** An automatic schedule as a dispatcher runs it: the decided one, or one configured for tests. */
export interface WebhookRetrySchedule {
  /** Wait before automatic attempt `i + 1`, from the end of attempt `i`, unscaled. */
  delaysMs: readonly number[];
  /** Multiplies every delay. */
  timeScale: number;
}

/**
 * How long to wait before automatic attempt `attempt` (1-based) of `schedule`, in ms, or null
 * when the schedule has no such attempt: give up. The decided schedule goes through
 * {@link delayBeforeAttempt}; a configured one (tests) is read the same way.
 */
export function delayBefore(schedule: WebhookRetrySchedule, attempt: number): number | null {
  if (schedule.delaysMs === webhookSchedule.delaysMs) return delayBeforeAttempt(attempt, schedule.timeScale);
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new RangeError(`attempt must be an integer >= 1, got ${attempt}`);
  const delay = schedule.delaysMs[attempt - 1];
  return delay === undefined ? null : Math.round(delay * schedule.timeScale);
}

/** Whether automatic attempt `attempt` is the schedule's last: failing it gives up. */
export function isLastWebhookAttempt(schedule: WebhookRetrySchedule, attempt: number): boolean {
  return delayBefore(schedule, attempt + 1) === null;
}

/**
 * Postgres or Redis failing under an automatic attempt: the job (attempts: 1) is put back with
 * backoff (1 s, 2 s, 4 s ... capped at 60 s) instead of failing, or the notice would be lost;
 * 12 times, about 9 minutes in all. Replays are never put back (their caller is waiting).
 */
export const webhookInfraRetry = {
  /** Times one automatic attempt is put back before its job fails. */
  maxRetries: 12,
  /** Wait before putting a job back for the `n`th time (1-based). */
  backoffMs: (n: number) => Math.min(60_000, 1000 * 2 ** (n - 1)),
} as const;

/**
 * How long to put back an automatic attempt that has started `attemptsStarted` times and hit an
 * infrastructure failure, or null when it has used every retry: let the job fail.
 */
export function infraRetryDelay(attemptsStarted: number): number | null {
  if (attemptsStarted > webhookInfraRetry.maxRetries) return null;
  return webhookInfraRetry.backoffMs(attemptsStarted);
}
