import { type CommonConfig, ConfigError, type Env, commonConfig, int, num, optStr } from '@hark/core';
import { type MetricsServerConfig, loadMetricsServerConfig } from '@hark/metrics';
import { webhookSchedule } from '@hark/queue';

export interface DispatcherQueueTuning {
  /** `HARK_DISPATCHER_CONCURRENCY`: notices one process sends at once. Default 50. */
  concurrency: number;
  /** `HARK_JOB_LOCK_MS`: BullMQ lock; a dead dispatcher's send is re-run after about this. Default 30 000. */
  lockDurationMs: number;
  /** `HARK_STALLED_INTERVAL_MS`: how often this process looks for dead dispatchers' jobs. Default 30 000. */
  stalledIntervalMs: number;
  /**
   * `HARK_MAX_STALLED_COUNT`: dispatcher deaths one attempt survives. Default 10: past it BullMQ
   * fails the job and the notice would be lost, and a send cannot plausibly kill a process.
   */
  maxStalledCount: number;
}

export interface WebhookScheduleConfig {
  /**
   * Wait before automatic attempt `i + 1`, from the end of attempt `i`, unscaled. Default: the
   * decided schedule (0, 30 s, 1 min, 5 min, 10 min, 30 min, 1 h, 1 h, 2 h, 2 h, 2 h). Its
   * length is the number of automatic attempts. `HARK_WEBHOOK_SCHEDULE_MS` (comma-separated ms)
   * replaces it; meant for tests, never needed in production.
   */
  delaysMs: readonly number[];
  /** `HARK_WEBHOOK_TIME_SCALE`: multiplies every delay (tests use e.g. 0.001). Default 1. */
  timeScale: number;
}

export interface DispatcherConfig extends CommonConfig {
  queue: DispatcherQueueTuning;
  schedule: WebhookScheduleConfig;
  /** `HARK_WEBHOOK_TIMEOUT_MS`: one send, connect to last byte read. Default 10 000. */
  timeoutMs: number;
  /**
   * `HARK_SHUTDOWN_GRACE_MS`: on SIGTERM, how long in-flight sends may take before the process
   * closes anyway (their jobs are then re-run elsewhere: at most a duplicate). Default 25 000,
   * comfortably above one send's time-out.
   */
  shutdownGraceMs: number;
  /** `HARK_DB_POOL_SIZE`. Default 10: sends hold no connection, only the short record transaction does. */
  dbPoolSize: number;
  /** `/metrics` and `/healthz` server: `HARK_METRICS_PORT` (default 9465, 0 = off), `HARK_METRICS_HOST` (127.0.0.1), `HARK_METRICS_TOKEN` (unset: loopback clients only). */
  metrics: MetricsServerConfig;
}

/** Parses the dispatcher's configuration once at boot. Throws ConfigError naming the bad variable. */
export function loadDispatcherConfig(env: Env = process.env): DispatcherConfig {
  const common = commonConfig(env);
  return {
    ...common,
    queue: {
      concurrency: int(env, 'HARK_DISPATCHER_CONCURRENCY', 50, 1, 1000),
      lockDurationMs: int(env, 'HARK_JOB_LOCK_MS', 30_000, 500),
      stalledIntervalMs: int(env, 'HARK_STALLED_INTERVAL_MS', 30_000, 100),
      maxStalledCount: int(env, 'HARK_MAX_STALLED_COUNT', 10, 1, 1000),
    },
    schedule: {
      delaysMs: parseSchedule(optStr(env, 'HARK_WEBHOOK_SCHEDULE_MS')),
      timeScale: num(env, 'HARK_WEBHOOK_TIME_SCALE', 1, 0),
    },
    timeoutMs: int(env, 'HARK_WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    shutdownGraceMs: int(env, 'HARK_SHUTDOWN_GRACE_MS', 25_000, 0),
    dbPoolSize: int(env, 'HARK_DB_POOL_SIZE', 10, 2),
    metrics: loadMetricsServerConfig(env, 9465),
  };
}

function parseSchedule(raw: string | undefined): readonly number[] {
  if (raw === undefined) return webhookSchedule.delaysMs;
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => !/^\d+$/.test(p))) {
    throw new ConfigError(
      `HARK_WEBHOOK_SCHEDULE_MS must be comma-separated whole milliseconds, got "${raw}"`,
    );
  }
  return parts.map(Number);
}
