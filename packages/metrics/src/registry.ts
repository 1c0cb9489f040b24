import { Registry, collectDefaultMetrics } from 'prom-client';

/**
 * A fresh registry with the default process metrics (CPU, memory, event loop, GC). Each app
 * and each test app gets its own, never prom-client's global one: two apps in one process (as
 * in the tests) would otherwise collide on metric names.
 */
export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}
