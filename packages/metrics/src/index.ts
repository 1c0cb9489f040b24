export { createRegistry } from './registry';
export { bearerMatches, tokenMatches } from './bearer';
export { loadMetricsServerConfig, type MetricsServerConfig } from './config';
export {
  serveMetrics,
  startMetricsServer,
  type MetricsLog,
  type MetricsServer,
  type MetricsServerOptions,
} from './server';
