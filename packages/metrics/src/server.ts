import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HarkError, errorBody, newRequestId } from '@hark/core';
import type { Registry } from 'prom-client';
import { bearerMatches } from './bearer';

export interface MetricsServerOptions {
  registry: Registry;
  port: number;
  host: string;
  /** When set, `/metrics` answers 401 unless given `Authorization: Bearer <token>`. */
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
    if (opts.token !== undefined && !bearerMatches(req.headers.authorization, opts.token)) {
      return sendError(res, new HarkError('invalid_api_key', 'The metrics token is missing or invalid.'));
    }
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
