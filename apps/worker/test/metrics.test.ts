import { readFileSync } from 'node:fs';
import { type MetricsServer, startMetricsServer } from '@hark/metrics';
import { metricSample, scrapeMetrics, waitFor } from '@hark/testing';
import { teardownFirst } from '@hark/testing/jest';
import { createQueues, workerConnection } from '@hark/queue';
import { WorkerMetrics } from '../src/metrics';
import type { RunningWorker } from '../src/worker';
import { testEnv, workerTest } from './worker-test-env';

// Real jobs through an in-process worker, then a scrape of its registry over HTTP, the way
// main.ts serves it.
jest.setTimeout(90_000);

const h = workerTest();
let running: RunningWorker;
let server: MetricsServer;
let base: string;
beforeAll(async () => {
  running = await h.startWorker();
  server = await startMetricsServer({ registry: running.metrics.registry, port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${server.port}`;
  teardownFirst(h, () => server.close());
});

const finished = (id: string) => h.finished(id);

it('counts job runs by outcome with their durations, the engine real-time factor and queue depths', async () => {
  const acct = await h.account(1000);
  // done: jfk.wav (11 s) through the real engine.
  const uploadId = await h.upload(acct, readFileSync(testEnv.jfkWav));
  const done = await h.transcript(acct, { uploadId, webhookUrl: 'https://hooks.example.com/x' });
  await h.enqueue(done);
  // retried, then failed: an audio URL that refuses connections, two attempts.
  const refused = await h.transcript(acct, { url: 'http://127.0.0.1:9/gone.wav' });
  await h.enqueue(refused, { attempts: 2, backoff: { type: 'fixed', delay: 200 } });
  // missing: a job whose transcript does not exist.
  await h.enqueue('tr_metricsmissing0000000');

  expect((await finished(done)).status).toBe('done');
  expect((await finished(refused)).errorCode).toBe('audio_unreachable');
  const text = await waitFor(
    async () => {
      const t = await scrapeMetrics(base);
      // The outcome counters move inside the handler; BullMQ moves the job to its final state
      // a moment later, so the queue depths are waited for too.
      const counted =
        metricSample(t, 'hark_jobs_total', { outcome: 'missing' }) === 1 &&
        metricSample(t, 'hark_jobs_total', { outcome: 'failed' }) === 1;
      const settled =
        metricSample(t, 'hark_queue_jobs', { queue: 'transcribe', state: 'completed' }) === 2 &&
        metricSample(t, 'hark_queue_jobs', { queue: 'transcribe', state: 'failed' }) === 1;
      return counted && settled ? t : null;
    },
    { timeout: 10_000, message: 'every run counted and every job settled' },
  );

  expect(metricSample(text, 'hark_jobs_total', { outcome: 'done' })).toBe(1);
  expect(metricSample(text, 'hark_jobs_total', { outcome: 'retried' })).toBe(1);
  expect(metricSample(text, 'hark_jobs_total', { outcome: 'failed' })).toBe(1);
  expect(metricSample(text, 'hark_jobs_total', { outcome: 'missing' })).toBe(1);
  expect(metricSample(text, 'hark_job_duration_seconds_count', { outcome: 'done' })).toBe(1);
  expect(metricSample(text, 'hark_job_duration_seconds_sum', { outcome: 'done' })).toBeGreaterThan(0);
  expect(metricSample(text, 'hark_job_duration_seconds_bucket', { outcome: 'done', le: '+Inf' })).toBe(1);

  // One engine run, on 11 s of audio.
  expect(metricSample(text, 'hark_engine_realtime_factor_count')).toBe(1);
  const rtf = metricSample(text, 'hark_engine_realtime_factor_sum')!;
  expect(rtf).toBeGreaterThan(0);
  expect(rtf).toBeLessThan(10);

  // Queue depths, read from Redis at scrape time: three finished transcribe jobs, and attempt 1
  // of the done transcript's notice waiting for a dispatcher (none runs here).
  const depth = (queue: string, state: string) => metricSample(text, 'hark_queue_jobs', { queue, state });
  expect(depth('transcribe', 'completed')).toBe(2);
  expect(depth('transcribe', 'failed')).toBe(1);
  expect(depth('transcribe', 'active')).toBe(0);
  expect(depth('webhook', 'waiting')).toBe(1);
  expect(metricSample(text, 'hark_queue_read_failures_total')).toBe(0);

  // Bounded labels: no ids.
  expect(text).not.toContain(done);
  expect(text).not.toContain(refused);
  // Default process metrics too.
  expect(text).toContain('process_cpu_user_seconds_total');
});

it('/healthz answers while the worker runs', async () => {
  const res = await fetch(`${base}/healthz`);
  expect(res.status).toBe(200);
});

it('answers within a few seconds while Redis is unreachable: the worker metrics, no queue depths, the failed read counted', async () => {
  // The watched queues on a workerConnection (retries for ever) to a port nothing listens on.
  const redis = workerConnection('redis://127.0.0.1:1', { retryStrategy: () => 200 });
  redis.on('error', () => undefined);
  const queues = createQueues(redis, 'hark-metrics-down');
  for (const q of [queues.transcribe.queue, queues.webhooks.queue]) q.on('error', () => undefined);
  const errors: unknown[] = [];
  const metrics = new WorkerMetrics((err) => errors.push(err));
  metrics.watchQueues([queues.transcribe.queue, queues.webhooks.queue]);
  metrics.jobFinished('done', 3);
  const down = await startMetricsServer({ registry: metrics.registry, port: 0, host: '127.0.0.1' });
  try {
    for (let scrape = 1; scrape <= 2; scrape++) {
      const started = Date.now();
      const text = await scrapeMetrics(`http://127.0.0.1:${down.port}`);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(metricSample(text, 'hark_jobs_total', { outcome: 'done' })).toBe(1);
      expect(text).toContain('process_cpu_user_seconds_total');
      expect(text).not.toMatch(/^hark_queue_jobs\{/m);
      expect(metricSample(text, 'hark_queue_read_failures_total')).toBe(scrape);
      expect(errors).toHaveLength(scrape);
    }
  } finally {
    await down.close();
    redis.disconnect();
  }
});
