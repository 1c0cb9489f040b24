import { type Processor, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { type JobPayloads, type JobResults, type QueueName, bullPrefix } from './catalog';
import { type QueueTuning, atMostEvery, workerOptions } from './connection';
import { type Consumer, type ConsumerLogger, type HandBack, closeConsumer } from './consumer-close';

/** The handler of queue `N`: takes its payload, returns its result. */
export type Handler<N extends QueueName> = Processor<JobPayloads[N], JobResults[N]>;

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

/** How a process consumes queue `N`. */
export interface ConsumerSpec<N extends QueueName> {
  handler: Handler<N>;
  /**
   * Attaches the process's listeners (`completed`, `failed`, `stalled`) to the new worker,
   * before it can take a job, so none of its events is missed.
   */
  listen?(worker: Worker<JobPayloads[N], JobResults[N]>): void;
}

/** A consumer for each queue `role` consumes: leaving one out, or giving one of another queue, fails to compile. */
export type HandlersOf<Role extends ConsumerRole> = { [N in QueuesOf<Role>]: ConsumerSpec<N> };

export type ConsumersOf<Role extends ConsumerRole> = {
  [N in QueuesOf<Role>]: Consumer<JobPayloads[N], JobResults[N]>;
};

/**
 * Starts a BullMQ worker on each catalog queue `role` consumes, with its handler, ready to take
 * jobs. A queue of the role without a handler, or one of another process, fails here at
 * start-up when it got past the compiler (immich's job repository refuses the same way).
 */
export async function startConsumers<Role extends ConsumerRole>(
  role: Role,
  handlers: HandlersOf<Role>,
  options: ConsumerOptions,
): Promise<ConsumersOf<Role>> {
  const entries = Object.entries(handlers) as [QueueName, ConsumerSpec<QueueName>][];
  assertConsumes(
    role,
    entries.map(([name]) => name),
  );
  const started = await Promise.all(
    entries.map(async ([name, spec]) => [name, await startConsumer(name, spec, options)] as const),
  );
  // Keyed by the handlers' own keys, which HandlersOf<Role> makes exactly QueuesOf<Role>.
  return Object.fromEntries(started) as unknown as ConsumersOf<Role>;
}

async function startConsumer<N extends QueueName>(
  name: N,
  { handler, listen }: ConsumerSpec<N>,
  options: ConsumerOptions,
): Promise<Consumer<JobPayloads[N], JobResults[N]>> {
  const { connection, redisPrefix, tuning, logger, handBack } = options;
  const worker = new Worker<JobPayloads[N], JobResults[N]>(
    name,
    handler,
    workerOptions(connection, bullPrefix(redisPrefix), tuning),
  );
  worker.on(
    'error',
    atMostEvery(10_000, (err, skipped) =>
      logger.error({ err: err.message, ...(skipped > 0 ? { skipped } : {}) }, 'worker error'),
    ),
  );
  listen?.(worker);
  await worker.waitUntilReady();
  return { worker, close: (close) => closeConsumer(worker, handBack, close, logger) };
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
