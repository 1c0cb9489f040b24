import type { IncomingHttpHeaders } from 'node:http';
import { bearerMatches } from './bearer';

/** The little of a request {@link metricsRefusal} reads (Node's and Express's requests fit). */
export interface MetricsRequest {
  headers: IncomingHttpHeaders;
  socket: { remoteAddress?: string | undefined };
}

const LOOPBACK = /^(?:127\.|::1$|::ffff:127\.)/;
// A reverse proxy on the same host connects from loopback on behalf of anyone; these headers
// say a request was relayed (a proxy that adds none cannot be told apart: set a token there).
const FORWARDED = ['forwarded', 'x-forwarded-for', 'x-real-ip'] as const;

/**
 * Who may read `/metrics` (the metrics text names routes, queues and volumes). With a token
 * (`HARK_METRICS_TOKEN`): whoever presents it as `Authorization: Bearer <token>`, from anywhere.
 * Without one: only a client on this machine connected directly (a loopback peer, no forwarding
 * header). Returns why a request is refused, or null when it may read them.
 */
export function metricsRefusal(req: MetricsRequest, token: string | undefined): string | null {
  if (token !== undefined) {
    return bearerMatches(req.headers.authorization, token)
      ? null
      : 'The metrics token is missing or invalid.';
  }
  const local =
    LOOPBACK.test(req.socket.remoteAddress ?? '') && FORWARDED.every((h) => req.headers[h] === undefined);
  return local ? null : 'Metrics are served to loopback clients only unless HARK_METRICS_TOKEN is set.';
}
