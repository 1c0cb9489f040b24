import type { ConsumerLogger } from './consumer-close';

export interface ShutdownSteps {
  logger: ConsumerLogger;
  /** Logs what the shutdown waits for, with the signal that started it. */
  starting(signal: string): void;
  /** Stops the consumer: its jobs finish or are handed back (`Consumer.close`). */
  close(): Promise<unknown>;
  /** Logged as `<name> close failed` when `close` throws. */
  name: string;
  /** Closes what the process opened once the consumer is closed: db, redis, metrics server. Never rejects. */
  release(): Promise<unknown>;
}

/**
 * On SIGTERM or SIGINT (once), closes the consumer, then its connections, and exits 0: a
 * failed close is logged and the process still exits, since the jobs it held are re-run
 * elsewhere. Register it before logging ready: whoever waits for that line may signal at once.
 */
export function closeOnSignals(steps: ShutdownSteps): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    steps.starting(signal);
    try {
      await steps.close();
    } catch (error) {
      steps.logger.error({ err: (error as Error).message }, `${steps.name} close failed`);
    }
    await steps.release();
    steps.logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/**
 * Until the process is ready (call the returned function then, before `closeOnSignals`): SIGTERM
 * or SIGINT exits 0 at once, as decisions ask of every process. Without it a signal during start
 * (waiting for Redis, say) ended the process with 143.
 */
export function exitOnSignalsUntilReady(logger: ConsumerLogger, name: string): () => void {
  const stop = (signal: string) => {
    logger.info({ signal }, `${name} stopped before it was ready`);
    process.exit(0);
  };
  const onTerm = () => stop('SIGTERM');
  const onInt = () => stop('SIGINT');
  process.on('SIGTERM', onTerm);
  process.on('SIGINT', onInt);
  return () => {
    process.off('SIGTERM', onTerm);
    process.off('SIGINT', onInt);
  };
}
