import { createRegistry } from '@hark/metrics';
import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * How one send ended: `delivered` (2xx), `failed` (anything else; an automatic attempt is
 * scheduled again, a replay is not) or `gave_up` (the last automatic attempt failed).
 */
export type AttemptOutcome = 'delivered' | 'failed' | 'gave_up';

/** Sends are cut at the time-out (10 s by default). */
const ATTEMPT_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The dispatcher's Prometheus metrics, on a registry of its own. */
export class DispatcherMetrics {
  readonly registry: Registry = createRegistry();
  private readonly attempts = new Counter({
    name: 'hark_webhook_attempts_total',
    help: 'Completion notices sent (automatic attempts and replays), by outcome.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly attemptSeconds = new Histogram({
    name: 'hark_webhook_attempt_duration_seconds',
    help: 'Time of one send, connect to last byte read, by outcome.',
    labelNames: ['outcome'] as const,
    buckets: ATTEMPT_BUCKETS,
    registers: [this.registry],
  });

  attemptSent(outcome: AttemptOutcome, seconds: number): void {
    this.attempts.inc({ outcome });
    this.attemptSeconds.observe({ outcome }, seconds);
  }
}
