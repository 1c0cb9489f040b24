import type { Worker } from 'bullmq';

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

/** Closes `worker` handing its running jobs back past the grace period, or abandoning them. */
export function closeConsumer(
  worker: Worker,
  handBack: HandBack | undefined,
  options: CloseOptions,
  logger: ConsumerLogger,
): Promise<{ finished: boolean; handedBack: number }> {
  return handBack
    ? closeHandingBack(worker, handBack, options, logger)
    : closeAbandoning(worker, options, logger);
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
