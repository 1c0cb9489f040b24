export { createRegistry } from './registry';
export { bearerMatches, tokenMatches } from './bearer';
export { metricsRefusal, type MetricsRequest } from './access';
export { loadMetricsServerConfig, type MetricsServerConfig } from './config';
export {
  serveMetrics,
  startMetricsServer,
  type MetricsLog,
  type MetricsServer,
  type MetricsServerOptions,
} from './server';
