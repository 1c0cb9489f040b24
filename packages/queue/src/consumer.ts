import { type Processor, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { type JobPayloads, type JobResults, type QueueName, bullPrefix } from './catalog';
import { type QueueTuning, workerOptions } from './connection';

/** The handler of queue `N`: takes its payload, returns its result. */
export type Handler<N extends QueueName, R extends JobResults[N] = JobResults[N]> = Processor<
  JobPayloads[N],
  R
>;

/** Which process consumes each queue: start-up refuses a process that leaves one of its own unconsumed. */
export const CONSUMED_BY = { transcribe: 'worker', webhook: 'dispatcher' } as const satisfies Record<
  QueueName,
  string
>;

export type ConsumerRole = (typeof CONSUMED_BY)[QueueName];

/** The queues `role` must consume. */
export type QueuesOf<Role extends ConsumerRole> = {
  [N in QueueName]: (typeof CONSUMED_BY)[N] extends Role ? N : never;
}[QueueName];

/**
 * The jobs a process runs that can be handed back to the queue unfinished (apps/worker's
 * ActiveJobs): with one, a shutdown past its grace period hands them back instead of
 * abandoning them to the stall check.
 */
export interface HandBack {
  /** From now on a job fetched is handed straight back. */
  stopAccepting(): void;
  /** True once no job runs, false when `ms` passed first. */
  idle(ms: number): Promise<boolean>;
  /** Aborts every running job and moves it back to `wait`; how many. */
  handBackAll(): Promise<number>;
  /** True once BullMQ stored the result of every job that finished here, false after `ms`. */
  allRecorded(ms: number): Promise<boolean>;
}

export interface ConsumerOptions {
  /** A `workerConnection` (maxRetriesPerRequest: null). The caller owns it and closes it. */
  connection: Redis;
  /** The deployment's Redis prefix (BullMQ keys live under `<prefix>:bull`). */
  redisPrefix: string;
  tuning: QueueTuning;
  logger: ConsumerLogger;
  /** Default: none; a shutdown past its grace period abandons running jobs (re-run once stalled). */
  handBack?: HandBack;
}

type LogFn = (obj: object | string, msg?: string) => void;
export interface ConsumerLogger {
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

export interface CloseOptions {
  /** How long running jobs may take to finish. */
  graceMs: number;
  /** Runs once no new job is taken, before the grace period (with a hand-back only). */
  stopped?: () => Promise<void>;
}

export interface Consumer<T, R> {
  worker: Worker<T, R>;
  /**
   * Takes no more jobs and lets running ones finish for `graceMs`. Past it, running jobs are
   * handed back (with a `handBack`) or abandoned, to be re-run once BullMQ finds them stalled:
   * at most a duplicate. `finished`: every running job finished in time.
   */
  close(options: CloseOptions): Promise<{ finished: boolean; handedBack: number }>;
}

/**
 * Starts a BullMQ worker on the catalog queue `name` with `handler`, ready to take jobs. The
 * handler must be `name`'s (its payload type), or this fails to compile; `role` is the process
 * starting it, and a queue another process should consume is refused at start-up.
 */
export async function startConsumer<
  Role extends ConsumerRole,
  N extends QueuesOf<Role>,
  R extends JobResults[N] = JobResults[N],
>(
  role: Role,
  name: N,
  handler: Handler<N, R>,
  options: ConsumerOptions,
): Promise<Consumer<JobPayloads[N], R>> {
  assertConsumes(role, [name]);
  const { connection, redisPrefix, tuning, logger, handBack } = options;
  const worker = new Worker<JobPayloads[N], R>(
    name,
    handler,
    workerOptions(connection, bullPrefix(redisPrefix), tuning),
  );
  worker.on('error', (err) => logger.error({ err: err.message }, 'worker error'));
  await worker.waitUntilReady();
  return {
    worker,
    close: (close) =>
      handBack ? closeHandingBack(worker, handBack, close, logger) : closeAbandoning(worker, close, logger),
  };
}

async function closeHandingBack(
  worker: Worker,
  handBack: HandBack,
  { graceMs, stopped }: CloseOptions,
  logger: ConsumerLogger,
): Promise<{ finished: boolean; handedBack: number }> {
  // Fetch nothing more (a job fetched at this very moment is handed straight back).
  handBack.stopAccepting();
  await worker.pause(true);
  await stopped?.();
  let handedBack = 0;
  const finished = await handBack.idle(graceMs);
  if (!finished) {
    handedBack = await handBack.handBackAll();
    logger.info({ handedBack }, 'grace period over; active jobs handed back to the queue');
  }
  // Every job that finished here has its result stored before the connections go. The close
  // is forced because handed-back handlers never settle, which a normal close would wait for
  // forever.
  if (!(await handBack.allRecorded(5000))) logger.warn('closing before BullMQ recorded every result');
  await worker.close(true);
  return { finished, handedBack };
}

async function closeAbandoning(
  worker: Worker,
  { graceMs }: CloseOptions,
  logger: ConsumerLogger,
): Promise<{ finished: boolean; handedBack: number }> {
  let timer: NodeJS.Timeout | undefined;
  const graceOver = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), graceMs);
  });
  // A normal close takes no more jobs and waits for the running ones.
  const closing = worker.close().then(() => true);
  const finished = await Promise.race([closing, graceOver]);
  clearTimeout(timer);
  if (!finished) {
    logger.warn({ graceMs }, 'grace period over; abandoning in-flight sends to be re-run');
    await worker.close(true);
  }
  return { finished, handedBack: 0 };
}

/**
 * Throws unless `started` holds exactly the queues the catalog gives `role` (immich's job
 * repository refuses a job without a handler the same way): a process that would leave a
 * queue of its own unconsumed fails at start-up instead of letting jobs pile up.
 */
export function assertConsumes(role: ConsumerRole, started: readonly QueueName[]): void {
  const own = (Object.keys(CONSUMED_BY) as QueueName[]).filter((n) => CONSUMED_BY[n] === role);
  const foreign = started.filter((n) => CONSUMED_BY[n] !== role);
  if (foreign.length > 0) throw new Error(`${role} must not consume ${foreign.join(', ')}`);
  const missing = own.filter((n) => !started.includes(n));
  if (missing.length > 0) throw new Error(`${role} has no consumer for ${missing.join(', ')}`);
}
