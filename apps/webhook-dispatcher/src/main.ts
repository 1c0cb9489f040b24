// Hark webhook dispatcher: wires configuration, Postgres, Redis and the BullMQ worker on the
// `webhook` queue, then runs until SIGTERM (in-flight sends finish and are recorded, exit 0).
import '@hark/core/require-node'; // first: an older Node stops here, saying which it needs
import { checkSecretOpensKeys } from '@hark/billing';
import { checkDatabase, createDb } from '@hark/db';
import { serveMetrics } from '@hark/metrics';
import {
  closeOnSignals,
  exitOnSignalsUntilReady,
  logRedisErrors,
  waitForRedis,
  workerConnection,
} from '@hark/queue';
import { loadDispatcherConfig } from './config';
import { startDispatcher } from './dispatcher';
import { createLogger } from './logger';

async function main(): Promise<void> {
  const config = loadDispatcherConfig();
  const logger = createLogger(config.logLevel);
  const ready = exitOnSignalsUntilReady(logger, 'dispatcher');
  const db = createDb({ databaseUrl: config.databaseUrl, poolSize: config.dbPoolSize });
  const redis = workerConnection(config.redisUrl);
  logRedisErrors(redis, (fields, msg) => logger.warn(fields, msg));
  await checkDatabase(db, config.startTimeoutMs);
  // Another HARK_SECRET than the keys': every notice would fail to unseal its signing secret.
  await checkSecretOpensKeys(db, config.secret);
  await waitForRedis(redis, config.startTimeoutMs);
  // From here a signal closes what has started (sends in flight finish and are recorded).
  const started: {
    running?: Awaited<ReturnType<typeof startDispatcher>>;
    metricsServer?: Awaited<ReturnType<typeof serveMetrics>>;
  } = {};
  ready();
  closeOnSignals({
    logger,
    name: 'dispatcher',
    starting: (signal) =>
      logger.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down: finishing in-flight sends'),
    close: async () => started.running?.close(),
    release: () => Promise.allSettled([db.$disconnect(), redis.quit(), started.metricsServer?.close()]),
  });
  const running = await startDispatcher({ config, db, redis, logger });
  started.running = running;
  started.metricsServer = await serveMetrics(config.metrics, running.metrics.registry, logger);
  logger.info(
    {
      concurrency: config.queue.concurrency,
      timeoutMs: config.timeoutMs,
      timeScale: config.schedule.timeScale,
    },
    'dispatcher ready',
  );
}

main().catch((err: unknown) => {
  console.error(
    JSON.stringify({
      level: 'fatal',
      app: 'webhook-dispatcher',
      msg: 'dispatcher failed to start',
      err: (err as Error).message,
    }),
  );
  process.exit(1);
});
