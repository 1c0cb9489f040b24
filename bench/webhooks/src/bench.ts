// Completion notices end to end: the real dispatcher (apps/webhook-dispatcher/dist/main.js, its
// own process) on real Postgres and Redis, sending to 50 real HTTP receivers on 127.0.0.1.
// 1. Latency: one notice at a time, from the moment a transcript reaches `done` (completeTranscript
//    committed) through the worker's enqueue of attempt 1 to the receiver reading the request.
// 2. Throughput: BENCH_NOTICES finished transcripts enqueued at once, spread over 50 receivers;
//    notices per second until the last is received, and until the last is recorded.
// Run through bench/webhooks/run.sh, which provides DATABASE_URL, REDIS_URL and HARK_SECRET.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { type Db, createDb } from '@hark/db';
import { catalogQueue, webhookProducer } from '@hark/queue';
import { type TestAccount, createProcessingTranscript, createTestAccount, startApp } from '@hark/testing';
import { completeTranscript } from '@hark/transcripts';
import { Redis } from 'ioredis';
import { summarize } from './stats';

// `--smoke`: a handful of notices, the test command's check that the bench runs to its figures.
const smoke = process.argv.includes('--smoke');
const num = (name: string, def: number, smokeDef = def) =>
  Number(process.env[name] ?? (smoke ? smokeDef : def));
const settings = {
  latencyNotices: num('BENCH_LATENCY_NOTICES', 200, 5),
  warmupNotices: num('BENCH_WARMUP_NOTICES', 20, 1),
  throughputNotices: num('BENCH_NOTICES', 1000, 20),
  receivers: num('BENCH_RECEIVERS', 50, 5),
  concurrency: num('HARK_DISPATCHER_CONCURRENCY', 50),
  targetP50Ms: 250,
};

/** Receivers note when each transcript's first notice arrives (by the body's `id`). */
class Receivers {
  readonly arrivals = new Map<string, number>();
  private readonly waiters = new Map<string, () => void>();
  private servers: http.Server[] = [];
  urls: string[] = [];

  async start(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const server = http.createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const at = performance.now();
          const { id } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string };
          if (!this.arrivals.has(id)) this.arrivals.set(id, at);
          this.waiters.get(id)?.();
          res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      this.servers.push(server);
      this.urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/${i}`);
    }
  }

  arrived(id: string, timeoutMs = 30_000): Promise<number> {
    const at = this.arrivals.get(id);
    if (at !== undefined) return Promise.resolve(at);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no notice for ${id} within ${timeoutMs} ms`)), timeoutMs);
      this.waiters.set(id, () => {
        clearTimeout(t);
        this.waiters.delete(id);
        resolve(this.arrivals.get(id)!);
      });
    });
  }

  async close(): Promise<void> {
    for (const s of this.servers) s.closeAllConnections();
    await Promise.all(this.servers.map((s) => new Promise((r) => s.close(r))));
  }
}

async function createTranscripts(db: Db, account: TestAccount, urls: string[], n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = await createProcessingTranscript(db, account, {
      url: 'https://example.com/a.wav',
      webhookUrl: urls[i % urls.length]!,
      model: 'whisper-bench',
      externalId: `bench-${i}`,
      metadata: { bench: 'webhooks' },
    });
    ids.push(id);
  }
  return ids;
}

const complete = (db: Db, id: string) =>
  completeTranscript(db, id, {
    durationSeconds: 42,
    language: 'en',
    model: 'whisper-bench',
    speakerCount: null,
    content: { text: 'bench', words: [], utterances: [], diarizationSegments: null },
  });

async function main(): Promise<void> {
  const env = {
    DATABASE_URL: process.env.DATABASE_URL!,
    REDIS_URL: process.env.REDIS_URL!,
    HARK_SECRET: process.env.HARK_SECRET!,
  };
  const prefix = `hark-bench-wh-${randomBytes(4).toString('hex')}`;
  const db = createDb({ databaseUrl: env.DATABASE_URL, poolSize: 4 });
  const redis = new Redis(env.REDIS_URL, { maxRetriesPerRequest: null });
  const webhooks = webhookProducer(catalogQueue('webhook', redis, prefix));
  const queue = webhooks.queue;
  const receivers = new Receivers();
  await receivers.start(settings.receivers);
  const account = await createTestAccount(db, env.HARK_SECRET, { toppedUp: true, credits: 1_000_000 });
  const dispatcher = startApp('webhook-dispatcher', {
    ...env,
    HARK_REDIS_PREFIX: prefix,
    ALLOW_PRIVATE_URLS: 'true', // the receivers are on loopback
    HARK_DISPATCHER_CONCURRENCY: String(settings.concurrency),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
  });
  // The worker's announce: attempt 1 with its job id and the catalog's options.
  const announce = (id: string) => webhooks.enqueueAttempt(id, 1);
  try {
    await dispatcher.waitForLog('dispatcher ready', 20_000);
    const load1 = os.loadavg()[0]!.toFixed(2);

    // 1. Latency, one notice at a time (after a few unmeasured ones warm up both processes).
    const total = settings.warmupNotices + settings.latencyNotices;
    const sequential = await createTranscripts(db, account, receivers.urls, total);
    const latencies: number[] = [];
    for (const [i, id] of sequential.entries()) {
      await complete(db, id);
      const done = performance.now();
      await announce(id);
      const at = await receivers.arrived(id);
      if (i >= settings.warmupNotices) latencies.push(at - done);
    }
    const latency = summarize(latencies);

    // 2. Throughput: every transcript already done, all attempts enqueued at once.
    const burst = await createTranscripts(db, account, receivers.urls, settings.throughputNotices);
    for (const id of burst) await complete(db, id);
    const started = performance.now();
    await Promise.all(burst.map(announce));
    const arrivals = await Promise.all(burst.map((id) => receivers.arrived(id, 120_000)));
    const lastReceived = Math.max(...arrivals) - started;
    for (;;) {
      const recorded = await db.webhookDelivery.count({ where: { transcriptId: { in: burst } } });
      if (recorded >= burst.length) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const lastRecorded = performance.now() - started;
    const notDelivered = await db.webhookDelivery.count({
      where: { transcriptId: { in: [...sequential, ...burst] }, delivered: false },
    });

    const perSecond = (ms: number) => Math.round((burst.length / ms) * 1000);
    const f = (x: number) => x.toFixed(1);
    console.log(
      `\nwebhook dispatcher bench (${os.cpus().length} CPUs, load1 ${load1}, node ${process.version}, dispatcher concurrency ${settings.concurrency})`,
    );
    console.log(`latency done -> receiver, ${latency.n} notices one at a time:`);
    console.log(
      `  p50 ${f(latency.p50)} ms   p99 ${f(latency.p99)} ms   max ${f(latency.max)} ms   (target p50 < ${settings.targetP50Ms} ms: ${latency.p50 < settings.targetP50Ms ? 'met' : 'missed'})`,
    );
    console.log(`throughput, ${burst.length} notices to ${settings.receivers} receivers:`);
    console.log(
      `  ${perSecond(lastReceived)} notices/s received (last after ${f(lastReceived)} ms), ${perSecond(lastRecorded)} notices/s recorded (last after ${f(lastRecorded)} ms)`,
    );
    console.log(`  attempts not delivered: ${notDelivered}`);
    console.log(
      JSON.stringify({
        latency,
        throughput: {
          notices: burst.length,
          receivers: settings.receivers,
          receivedPerSecond: perSecond(lastReceived),
          recordedPerSecond: perSecond(lastRecorded),
        },
        notDelivered,
        load1,
      }),
    );
  } finally {
    dispatcher.kill('SIGTERM');
    await dispatcher.exited;
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await receivers.close();
    await Promise.allSettled([db.$disconnect(), redis.quit()]);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
