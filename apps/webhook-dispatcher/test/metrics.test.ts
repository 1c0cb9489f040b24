import { type MetricsServer, startMetricsServer } from '@hark/metrics';
import { metricSample, scrapeMetrics, waitFor } from '@hark/testing';
import { teardownFirst } from '@hark/testing/jest';
import { type Receiver, dispatcherTest } from './dispatcher-env';

// Real sends through an in-process dispatcher, then a scrape of its registry over HTTP, the way
// main.ts serves it.
jest.setTimeout(40_000);

const h = dispatcherTest();
let ok: Receiver;
let broken: Receiver;
let server: MetricsServer;
let base: string;

beforeAll(async () => {
  ok = await h.receiver(() => ({ status: 200, body: 'ok' }));
  broken = await h.receiver(() => ({ status: 500, body: 'nope' }));
  // Two automatic attempts 200 ms apart.
  const running = await h.start({ HARK_WEBHOOK_SCHEDULE_MS: '0,200', HARK_WEBHOOK_TIMEOUT_MS: '1000' });
  server = await startMetricsServer({ registry: running.metrics.registry, port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${server.port}`;
  teardownFirst(h, () => server.close());
});

it('counts attempts by outcome (delivered, failed then gave_up) with their send durations', async () => {
  const delivered = await h.transcript(ok.url);
  const refused = await h.transcript(broken.url);
  await h.finish(delivered);
  await h.finish(refused, 'failed');
  await ok.received(1);
  await broken.received(2);

  const text = await waitFor(
    async () => {
      const t = await scrapeMetrics(base);
      return metricSample(t, 'hark_webhook_attempts_total', { outcome: 'gave_up' }) === 1 ? t : null;
    },
    { timeout: 10_000, message: 'the last attempt counted' },
  );
  const attempts = (outcome: string) => metricSample(text, 'hark_webhook_attempts_total', { outcome });
  expect([attempts('delivered'), attempts('failed'), attempts('gave_up')]).toEqual([1, 1, 1]);
  const seconds = (outcome: string) =>
    metricSample(text, 'hark_webhook_attempt_duration_seconds_count', { outcome });
  expect([seconds('delivered'), seconds('failed'), seconds('gave_up')]).toEqual([1, 1, 1]);
  expect(
    metricSample(text, 'hark_webhook_attempt_duration_seconds_sum', { outcome: 'delivered' }),
  ).toBeGreaterThan(0);
  expect(text).not.toContain(delivered);
  expect(text).toContain('nodejs_eventloop_lag_seconds');
});
