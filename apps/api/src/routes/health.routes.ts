// GET /healthz (process up), GET /readyz (Postgres and Redis reachable)
import type { IRouter } from 'express';
import { mounter } from '../contract/mount';
import { ROUTE } from '../contract/routes.contract';
import type { ReadinessService } from '../services/readiness.service';

/** `draining`: the process is shutting down; it still answers but must not get new traffic. */
export function healthRoutes(
  r: IRouter,
  readiness: ReadinessService,
  lifecycle: { readonly draining: boolean } = { draining: false },
): void {
  const mount = mounter(r, { base: '', auth: 'none' });
  mount(ROUTE.healthz, (_req, res) => {
    res.json({ data: { status: 'ok' } });
  });
  mount(ROUTE.readyz, async (req, res) => {
    if (lifecycle.draining) {
      res.status(503).json({ data: { status: 'draining' } });
      return;
    }
    const { postgres, redis } = await readiness.check(req.log);
    res
      .status(postgres && redis ? 200 : 503)
      .json({ data: { status: postgres && redis ? 'ready' : 'unavailable', postgres, redis } });
  });
}
