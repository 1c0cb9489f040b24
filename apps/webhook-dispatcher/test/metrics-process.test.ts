import { freePort, metricSample, scrapeMetrics } from '@hark/testing';
import { dispatcherTest } from './dispatcher-env';

// The built dispatcher serves its metrics on HARK_METRICS_PORT (apps/webhook-dispatcher/dist/main.js).
jest.setTimeout(40_000);

const h = dispatcherTest();

it('serves /metrics and /healthz on HARK_METRICS_PORT; SIGTERM exits 0', async () => {
  const port = await freePort();
  const p = await h.startProcess({ HARK_METRICS_PORT: String(port), HARK_METRICS_HOST: '127.0.0.1' });
  await p.waitForLog('metrics listening');
  const base = `http://127.0.0.1:${port}`;
  expect((await fetch(`${base}/healthz`)).status).toBe(200);
  const text = await scrapeMetrics(base);
  expect(text).toContain('# TYPE hark_webhook_attempts_total counter');
  expect(metricSample(text, 'hark_webhook_attempts_total', { outcome: 'delivered' })).toBeUndefined();
  p.kill('SIGTERM');
  expect(await p.exited).toBe(0);
});
