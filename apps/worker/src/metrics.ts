import { createRegistry } from '@hark/metrics';
import type { Queue } from 'bullmq';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { JobOutcome } from './transcribe.job';

/**
 * How a transcribe job's run ended in this process: the handler's own outcomes, `failed` (the
 * transcript failed, or BullMQ will fail the job: no attempt left), `retried` (BullMQ runs it
 * again after its backoff) and `handed_back` (shutdown returned it to the queue).
 */
export type JobRunOutcome = JobOutcome | 'failed' | 'retried' | 'handed_back';

/** Job durations run from minutes to hours (10 h of audio at most). */
const JOB_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14_400, 36_000];
/** Engine seconds per audio second: below 1 is faster than real time. */
const RTF_BUCKETS = [0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10];

/**
 * The worker's Prometheus metrics, on a registry of its own: job runs and their durations by
 * outcome, the engine's real-time factor, and the depth of the queues, read from Redis when
 * scraped.
 */
export class WorkerMetrics {
  readonly registry: Registry = createRegistry();
  private readonly jobs = new Counter({
    name: 'hark_jobs_total',
    help: 'Transcribe job runs in this process, by how they ended.',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  private readonly jobSeconds = new Histogram({
    name: 'hark_job_duration_seconds',
    help: 'Wall time of a transcribe job run, by how it ended.',
    labelNames: ['outcome'] as const,
    buckets: JOB_BUCKETS,
    registers: [this.registry],
  });
  private readonly stalled = new Counter({
    name: 'hark_jobs_stalled_total',
    help: 'Jobs this process found stalled (their worker died) and put back.',
    registers: [this.registry],
  });
  private readonly realtimeFactor = new Histogram({
    name: 'hark_engine_realtime_factor',
    help: 'Engine seconds per second of audio, per transcription (below 1: faster than real time).',
    buckets: RTF_BUCKETS,
    registers: [this.registry],
  });
  private queues: readonly Queue[] = [];

  constructor(onCollectError: (err: unknown) => void = () => undefined) {
    const queues = () => this.queues;
    new Gauge({
      name: 'hark_queue_jobs',
      help: 'Jobs in each queue by state, read from Redis when scraped.',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        try {
          for (const q of queues()) {
            for (const [state, n] of Object.entries(await q.getJobCounts()))
              this.set({ queue: q.name, state }, n);
          }
        } catch (err) {
          // Redis away: the scrape still answers, without queue depths.
          this.reset();
          onCollectError(err);
        }
      },
    });
  }

  /** Queues whose depth is reported (the worker's transcribe and webhook queues). */
  watchQueues(queues: readonly Queue[]): void {
    this.queues = queues;
  }

  jobFinished(outcome: JobRunOutcome, seconds: number): void {
    this.jobs.inc({ outcome });
    this.jobSeconds.observe({ outcome }, seconds);
  }

  jobStalled(): void {
    this.stalled.inc();
  }

  /** One engine run: its wall time against the audio's length. */
  engineRun(engineSeconds: number, audioSeconds: number): void {
    if (audioSeconds > 0) this.realtimeFactor.observe(engineSeconds / audioSeconds);
  }
}
