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

/** How long a scrape waits for the queue depths before answering without them. */
const QUEUE_READ_TIMEOUT_MS = 2000;

interface QueueDepth {
  queue: string;
  counts: Record<string, number>;
}

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
  /** The Redis read in flight: a read that has not answered is not sent again (see `scrapeDepths`). */
  private depthRead: Promise<QueueDepth[]> | null = null;
  /** The outcome of the scrape in progress, shared by its collectors. */
  private scrape: Promise<QueueDepth[] | null> | null = null;
  private readonly readFailures = new Counter({
    name: 'hark_queue_read_failures_total',
    help: 'Scrapes that could not read the queue depths from Redis in time (hark_queue_jobs left out).',
    registers: [this.registry],
    // Waits for this scrape's read, so the count includes it.
    collect: () => this.scrapeDepths().then(() => undefined),
  });

  /**
   * `onCollectError`: told when a scrape could not read the queue depths (Redis away, or slower
   * than `queueReadTimeoutMs`, default 2 s); the scrape answers anyway, without them.
   */
  constructor(
    private readonly onCollectError: (err: unknown) => void = () => undefined,
    private readonly queueReadTimeoutMs = QUEUE_READ_TIMEOUT_MS,
  ) {
    const depths = () => this.scrapeDepths();
    new Gauge({
      name: 'hark_queue_jobs',
      help: 'Jobs in each queue by state, read from Redis when scraped.',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        // Redis away: the scrape still answers, without queue depths.
        for (const { queue, counts } of (await depths()) ?? [])
          for (const [state, n] of Object.entries(counts)) this.set({ queue, state }, n);
      },
    });
  }

  /**
   * The depths of the watched queues for the scrape in progress (its collectors all start at
   * once and share it), or null when Redis did not answer within the time-out: the failure is
   * counted and told once per scrape. The reads go out on the worker's connection, which waits
   * for Redis for ever, so a read still unanswered is waited on again rather than sent again:
   * an outage never piles up commands.
   */
  private scrapeDepths(): Promise<QueueDepth[] | null> {
    this.scrape ??= this.readDepths().finally(() => (this.scrape = null));
    return this.scrape;
  }

  private async readDepths(): Promise<QueueDepth[] | null> {
    this.depthRead ??= Promise.all(
      this.queues.map(async (q) => ({ queue: q.name, counts: await q.getJobCounts() })),
    ).finally(() => (this.depthRead = null));
    const read = this.depthRead;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`queue depths not read from Redis within ${this.queueReadTimeoutMs} ms`)),
        this.queueReadTimeoutMs,
      );
    });
    try {
      return await Promise.race([read, timedOut]);
    } catch (err) {
      this.readFailures.inc();
      this.onCollectError(err);
      return null;
    } finally {
      clearTimeout(timer);
    }
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
