export { createRegistry } from './registry';
export { bearerMatches } from './bearer';
export { loadMetricsServerConfig, type MetricsServerConfig } from './config';
export { startMetricsServer, type MetricsServer, type MetricsServerOptions } from './server';
