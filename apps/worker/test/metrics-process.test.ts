import { freePort, metricSample, scrapeMetrics } from '@hark/testing';
import { workerTest } from './worker-test-env';

// The built worker serves its metrics on HARK_METRICS_PORT (apps/worker/dist/main.js).
jest.setTimeout(60_000);

const h = workerTest();

const worker = (env: Record<string, string>) => h.startProcess({ HARK_METRICS_HOST: '127.0.0.1', ...env });

it('serves /metrics and /healthz; a second worker on a taken port runs on without metrics; SIGTERM exits 0', async () => {
  const port = await freePort();
  const w = await worker({ HARK_METRICS_PORT: String(port), HARK_METRICS_TOKEN: 'scrape-token-0123456789' });
  expect((await w.waitForLog('metrics listening')).port).toBe(port);
  const base = `http://127.0.0.1:${port}`;
  expect((await fetch(`${base}/healthz`)).status).toBe(200);
  expect((await fetch(`${base}/metrics`)).status).toBe(401);
  const text = await scrapeMetrics(base, 'scrape-token-0123456789');
  expect(metricSample(text, 'hark_queue_jobs', { queue: 'transcribe', state: 'waiting' })).toBe(0);
  expect(text).toContain('# TYPE hark_jobs_total counter');

  const second = await worker({ HARK_METRICS_PORT: String(port) });
  await second.waitForLog(
    'metrics server could not start (set HARK_METRICS_PORT, or 0 to turn it off); running without it',
  );
  second.kill('SIGTERM');
  w.kill('SIGTERM');
  expect(await Promise.all([w.exited, second.exited])).toEqual([0, 0]);
});

it('HARK_METRICS_PORT=0 turns the server off', async () => {
  const w = await worker({ HARK_METRICS_PORT: '0' });
  expect(w.logs.some((l) => l.msg === 'metrics listening')).toBe(false);
  w.kill('SIGTERM');
  expect(await w.exited).toBe(0);
});
