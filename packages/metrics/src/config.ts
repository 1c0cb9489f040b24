import { type Env, int, secretToken, str } from '@hark/core';

export interface MetricsServerConfig {
  /** `HARK_METRICS_PORT`: port of the `/metrics` and `/healthz` server; 0 turns it off. */
  port: number;
  /** `HARK_METRICS_HOST`: address to bind. Default `127.0.0.1` (this machine only); a scrape from
   *  another host (containers) needs `0.0.0.0` or an interface address, and a token. */
  host: string;
  /** `HARK_METRICS_TOKEN`: when set (at least 16 characters, as on the API), `/metrics` needs
   *  `Authorization: Bearer <token>`; unset, only direct loopback clients may read it (see `metricsRefusal`). */
  token: string | undefined;
}

/** The metrics server settings of a worker-like process (the API serves `/metrics` itself). */
export function loadMetricsServerConfig(env: Env, defaultPort: number): MetricsServerConfig {
  return {
    port: int(env, 'HARK_METRICS_PORT', defaultPort, 0, 65535),
    host: str(env, 'HARK_METRICS_HOST', '127.0.0.1'),
    token: secretToken(env, 'HARK_METRICS_TOKEN'),
  };
}
