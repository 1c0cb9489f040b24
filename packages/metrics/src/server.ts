import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HarkError, errorBody, newRequestId } from '@hark/core';
import type { Registry } from 'prom-client';
import { metricsRefusal } from './access';
import type { MetricsServerConfig } from './config';

export interface MetricsServerOptions {
  registry: Registry;
  port: number;
  host: string;
  /** When set, `/metrics` answers 401 unless given `Authorization: Bearer <token>`; unset, it
   *  answers only direct loopback clients ({@link metricsRefusal}). */
  token?: string | undefined;
  /** Told when a scrape fails (the scrape gets a 500). */
  onError?(err: unknown): void;
}

export interface MetricsServer {
  /** The bound port (useful with port 0). */
  port: number;
  close(): Promise<void>;
}

function send(res: http.ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) }).end(body);
}

function sendError(res: http.ServerResponse, e: HarkError): void {
  send(res, e.status, 'application/json; charset=utf-8', JSON.stringify(errorBody(e, newRequestId())));
}

/**
 * A tiny HTTP server for processes that serve nothing else (worker, dispatcher): `GET /metrics`
 * (Prometheus text format) and `GET /healthz` (the process is up). Anything else is 404.
 */
export async function startMetricsServer(opts: MetricsServerOptions): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return sendError(res, new HarkError('not_found', 'No such route.'));
    if (path === '/healthz')
      return send(res, 200, 'application/json; charset=utf-8', '{"data":{"status":"ok"}}');
    if (path !== '/metrics') return sendError(res, new HarkError('not_found', 'No such route.'));
    const refusal = metricsRefusal(req, opts.token);
    if (refusal !== null) return sendError(res, new HarkError('invalid_api_key', refusal));
    opts.registry.metrics().then(
      (text) => send(res, 200, opts.registry.contentType, text),
      (err: unknown) => {
        opts.onError?.(err);
        sendError(res, new HarkError('internal'));
      },
    );
  });
  server.listen(opts.port, opts.host);
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The little of a logger {@link serveMetrics} needs (pino's fits). */
export interface MetricsLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * Starts the metrics server of a worker-like process, unless `config.port` is 0. A port that
 * cannot be bound (already in use) is logged and the process goes on without it: metrics never
 * stop a process from doing its work.
 */
export async function serveMetrics(
  config: MetricsServerConfig,
  registry: Registry,
  log: MetricsLog,
): Promise<MetricsServer | null> {
  if (config.port === 0) return null;
  try {
    const server = await startMetricsServer({
      registry,
      port: config.port,
      host: config.host,
      token: config.token,
      onError: (err) => log.error({ err: (err as Error).message }, 'metrics scrape failed'),
    });
    log.info({ port: server.port, host: config.host }, 'metrics listening');
    if (config.token === undefined && !/^(?:127\.|::1$|localhost$)/.test(config.host)) {
      log.info(
        { host: config.host },
        'metrics: no HARK_METRICS_TOKEN, so only loopback clients may read /metrics; set one to scrape from another host',
      );
    }
    return server;
  } catch (err) {
    log.error(
      { err: (err as Error).message, port: config.port, host: config.host },
      'metrics server could not start (set HARK_METRICS_PORT, or 0 to turn it off); running without it',
    );
    return null;
  }
}
