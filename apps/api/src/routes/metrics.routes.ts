// GET /metrics (Prometheus; outside /v1, no API key): HARK_METRICS_TOKEN as a bearer token when
// set, else loopback clients only
import { HarkError } from '@hark/core';
import { metricsRefusal } from '@hark/metrics';
import type { IRouter } from 'express';
import type { Registry } from 'prom-client';

export function metricsRoutes(r: IRouter, registry: Registry, token: string | undefined): void {
  r.get('/metrics', async (req, res) => {
    const refusal = metricsRefusal(req, token);
    if (refusal !== null) throw new HarkError('invalid_api_key', refusal);
    const text = await registry.metrics();
    // Written as is: res.send would rewrite the content type's parameters.
    res.setHeader('Content-Type', registry.contentType);
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.setHeader('Cache-Control', 'no-store');
    res.end(text);
  });
}
