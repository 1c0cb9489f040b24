import { createRegistry } from '@hark/metrics';
import type { Express, Request } from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Long enough for `GET ?wait=60` and large uploads at the top. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * The API's Prometheus metrics: requests and their durations by method, route template and
 * status. Labels are bounded: the route is the Express template (`/v1/transcripts/:id`), never
 * the path, and requests no route handled (unknown paths, failed authentication) are
 * `unmatched`; unusual methods are `OTHER`.
 */
export class ApiMetrics {
  readonly registry: Registry = createRegistry();
  private readonly requests = new Counter({
    name: 'hark_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: 'hark_http_request_duration_seconds',
    help: 'Time from receiving a request to the end of its response, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });

  /** Counts and times one answered request (a `FinishedHook`: the request context calls it). */
  readonly record = (req: Request, status: number, seconds: number): void => {
    const labels = {
      method: METHODS.has(req.method) ? req.method : 'OTHER',
      route: (req as TrackedRequest)[TEMPLATE] ?? 'unmatched',
      status: String(status),
    };
    this.requests.inc(labels);
    this.duration.observe(labels, seconds);
  };
}

const ROUTE = Symbol('hark.route');
const TEMPLATE = Symbol('hark.routeTemplate');
type TrackedRequest = Request & { [ROUTE]?: unknown; [TEMPLATE]?: string };

/**
 * Makes the requests of `app` remember their matched route's template with its mount path, for
 * the metrics' `route` label. Express sets `req.route` when a route matches, while `req.baseUrl`
 * still holds the mount path (`/v1`); by the time the response finishes, an error may have
 * unwound the routers and reset `baseUrl`. So the template is taken when the route is set, by an
 * accessor on the app's request prototype (once per app, nothing per request).
 */
export function trackRouteTemplates(app: Express): void {
  Object.defineProperty(app.request, 'route', {
    configurable: true,
    enumerable: true,
    get(this: TrackedRequest): unknown {
      return this[ROUTE];
    },
    set(this: TrackedRequest, value: unknown) {
      if (value === this[ROUTE]) return; // set again when the route dispatches
      this[ROUTE] = value;
      if (value === undefined) return;
      // A route defined for several paths (the dashboard's pages) counts under its mount path.
      const path = (value as { path?: unknown }).path;
      this[TEMPLATE] = this.baseUrl + (typeof path === 'string' ? path : '') || '/';
    },
  });
}
