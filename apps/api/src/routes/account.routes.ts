// GET /v1/balance, GET /v1/limits
import { Router } from 'express';
import { ROUTE } from '../contract/routes.contract';
import { type RouteLimit, keyedMount } from '../contract/mount';
import type { BalanceService } from '../services/balance.service';
import type { LimitsService } from '../services/limits.service';

export function accountRoutes(balances: BalanceService, limits: LimitsService, limit: RouteLimit): Router {
  const r = Router();
  const mount = keyedMount(r, limit);

  mount(ROUTE.getBalance, async (req, res) => {
    res.json({ data: await balances.get(req.auth!.accountId) });
  });

  mount(ROUTE.getLimits, async (req, res) => {
    res.json({ data: await limits.get(req.auth!.accountId) });
  });
  return r;
}
