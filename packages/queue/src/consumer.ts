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

export interface ConsumerOptions {
  /** A `workerConnection` (maxRetriesPerRequest: null). The caller owns it and closes it. */
  connection: Redis;
  /** The deployment's Redis prefix (BullMQ keys live under `<prefix>:bull`). */
  redisPrefix: string;
  tuning: QueueTuning;
  logger: { error(obj: object, msg: string): void };
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
>(role: Role, name: N, handler: Handler<N, R>, options: ConsumerOptions): Promise<Worker<JobPayloads[N], R>> {
  assertConsumes(role, [name]);
  const { connection, redisPrefix, tuning, logger } = options;
  const worker = new Worker<JobPayloads[N], R>(
    name,
    handler,
    workerOptions(connection, bullPrefix(redisPrefix), tuning),
  );
  worker.on('error', (err) => logger.error({ err: err.message }, 'worker error'));
  await worker.waitUntilReady();
  return worker;
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
