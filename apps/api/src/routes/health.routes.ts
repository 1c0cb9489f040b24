// GET /healthz (process up), GET /readyz (Postgres and Redis reachable)
import { once } from 'node:events';
import type { IRouter } from 'express';
import type { ApiDeps } from '../context';

/** `draining`: the process is shutting down; it still answers but must not get new traffic. */
export function healthRoutes(
  r: IRouter,
  deps: ApiDeps,
  lifecycle: { readonly draining: boolean } = { draining: false },
): void {
  r.get('/healthz', (_req, res) => {
    res.json({ data: { status: 'ok' } });
  });
  r.get('/readyz', async (req, res) => {
    if (lifecycle.draining) {
      res.status(503).json({ data: { status: 'draining' } });
      return;
    }
    const check = async (fn: () => Promise<unknown>): Promise<boolean> => {
      try {
        await Promise.race([
          fn(),
          new Promise((_, rej) => setTimeout(() => rej(new Error('timeout')), 2000)),
        ]);
        return true;
      } catch (err) {
        req.log.warn({ err }, 'readiness check failed');
        return false;
      }
    };
    const [postgres, redis] = await Promise.all([
      check(() => deps.db.$queryRaw`SELECT 1`),
      check(async () => {
        if (deps.redis.status !== 'ready') await once(deps.redis, 'ready');
        return deps.redis.ping();
      }),
    ]);
    res
      .status(postgres && redis ? 200 : 503)
      .json({ data: { status: postgres && redis ? 'ready' : 'unavailable', postgres, redis } });
  });
}
