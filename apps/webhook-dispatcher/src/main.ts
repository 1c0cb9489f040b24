// Hark webhook-dispatcher process (skeleton): connects to Postgres and Redis and waits for work.
import { commonConfig } from '@hark/core';
import { createDb } from '@hark/db';
import { workerConnection } from '@hark/queue';

async function main(): Promise<void> {
  const config = commonConfig(process.env);
  const db = createDb({ databaseUrl: config.databaseUrl, poolSize: 4 });
  const redis = workerConnection(config.redisUrl);
  await db.$queryRaw`SELECT 1`;
  await redis.ping();
  console.log(JSON.stringify({ level: 'info', app: 'webhook-dispatcher', msg: 'ready (idle)' }));
  const shutdown = async () => {
    await Promise.allSettled([db.$disconnect(), redis.quit()]);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
}

main().catch((err: unknown) => {
  console.error(JSON.stringify({ level: 'fatal', app: 'webhook-dispatcher', msg: 'failed to start', err: (err as Error).message }));
  process.exit(1);
});
