// Hark API process: wires configuration, Postgres, Redis and the Express app, then listens.
import '@hark/core/require-node'; // first: an older Node stops here, saying which it needs
import { exitOnSignalsUntilReady } from '@hark/queue';
import { describeStorage } from '@hark/storage';
import { createApp } from './app';
import { answerClientErrors } from './client-errors';
import { loadApiConfig } from './config';
import { createLogger } from './logger';
import { connectApiDeps } from './wiring';

async function main(): Promise<void> {
  const config = loadApiConfig();
  const logger = createLogger(config.logLevel, 'api');
  const starting = exitOnSignalsUntilReady(logger, 'api');
  const deps = await connectApiDeps(config, logger);
  starting();
  const app = createApp(deps);
  const server = app.listen(config.port, config.host, () => {
    const addr = server.address();
    logger.info(
      {
        port: typeof addr === 'object' && addr ? addr.port : config.port,
        host: config.host,
        uploadHasher: deps.uploadHasher,
        storage: describeStorage(config),
      },
      'api listening',
    );
  });
  answerClientErrors(server, config.corsOrigins);

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    // Drain first: keep answering (readiness 503 tells balancers to stop routing here, and
    // `Connection: close` sends keep-alive clients elsewhere), then stop listening. Closing the
    // listener at once would reset connections already accepted or queued in the backlog.
    app.beginDrain();
    logger.info({ signal, drainMs: config.shutdownDrainMs }, 'shutting down: draining');
    setTimeout(() => {
      logger.info('no new connections; finishing in-flight requests');
      const force = setTimeout(() => {
        logger.warn('grace period over; closing remaining connections');
        server.closeAllConnections();
      }, config.shutdownGraceMs);
      force.unref();
      server.close(async () => {
        await app.close();
        await deps.disconnect();
        logger.info('stopped');
        process.exit(0);
      });
      server.closeIdleConnections();
    }, config.shutdownDrainMs);
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  console.error(JSON.stringify({ level: 'fatal', msg: 'api failed to start', err: (err as Error).message }));
  process.exit(1);
});
