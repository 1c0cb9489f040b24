// See README.md. Figures are printed, never asserted.
import { randomBytes } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createDb } from '@hark/db';
import { createTestAccount, s3TestBucket, startApp, waitFor } from '@hark/testing';

const MiB = 1024 * 1024;
const BOUNDARY = 'hark-bench-boundary';
/** Requests each account may have waiting (HARK_OPENAI_WAITING_PER_ACCOUNT, set so). */
const PER_ACCOUNT = 10;

interface Options {
  requests: number;
  fileMiB: number;
  /** How long RSS is sampled once every request waits (ms). */
  holdMs: number;
  /** Another build's API (`apps/api/dist/main.js`): the baseline. */
  api: string | undefined;
  /** The S3 driver against the S3Proxy run.sh started, instead of the local one. */
  s3: boolean;
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      smoke: { type: 'boolean', default: false },
      requests: { type: 'string' },
      mib: { type: 'string' },
      api: { type: 'string' },
      s3: { type: 'boolean', default: false },
    },
  });
  const smoke = values.smoke;
  return {
    requests: Number(values.requests ?? (smoke ? 2 : 200)),
    fileMiB: Number(values.mib ?? (smoke ? 1 : 20)),
    holdMs: smoke ? 0 : 5000,
    api: values.api,
    s3: values.s3,
  };
}

/** The process's resident set now and its peak (VmRSS, VmHWM), in MB. */
async function memory(pid: number): Promise<{ rss: number; peak: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/**
 * One POST /v1/audio/transcriptions of `file` (the fields first, as the Python client sends
 * them); resolves with the answer's status, or 0 once the bench hangs up.
 */
function transcribe(port: number, auth: Record<string, string>, file: Buffer) {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const req = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/v1/audio/transcriptions',
    agent: false,
    headers: {
      ...auth,
      'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
      'Content-Length': head.length + file.length + tail.length,
    },
  });
  const status = new Promise<number>((resolve) => {
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
  });
  req.write(head);
  req.write(file); // the one buffer every request sends: the bench holds no copies
  req.end(tail);
  return { status, hangUp: () => req.destroy() };
}

async function main(): Promise<void> {
  const opts = options();
  const dir = process.env.HARK_BENCH_DIR!;
  const storage = path.join(dir, 'storage');
  const db = createDb({ databaseUrl: process.env.DATABASE_URL!, poolSize: 2 });
  const accounts = await Promise.all(
    Array.from({ length: Math.ceil(opts.requests / PER_ACCOUNT) }, () =>
      createTestAccount(db, process.env.HARK_SECRET!, { toppedUp: true, credits: 100_000 }),
    ),
  );
  // No worker: each request stores its file, creates its transcript and waits (up to 15 min).
  const api = startApp(
    'api',
    {
      PORT: '0',
      HARK_REDIS_PREFIX: `hark-bench-openai-${process.pid}`,
      HARK_STORAGE_DIR: storage,
      HARK_OPENAI_WAIT_SECONDS: '900',
      HARK_OPENAI_WAITING_PER_ACCOUNT: String(PER_ACCOUNT),
      ...(opts.s3 ? (await s3TestBucket()).env : {}),
    },
    opts.api ? { main: opts.api } : {},
  );
  try {
    const port = (await api.waitForLog('api listening', 60_000)).port as number;
    const pid = api.child.pid!;
    const idle = await memory(pid);
    const file = randomBytes(Math.round(opts.fileMiB * MiB));
    const t0 = Date.now();
    const calls = Array.from({ length: opts.requests }, (_, i) =>
      transcribe(port, accounts[i % accounts.length]!.auth, file),
    );
    let answered = 0;
    for (const c of calls) void c.status.then(() => answered++);
    const ids = accounts.map((a) => a.accountId);
    // Every file stored and its transcript created (or the request answered: refused).
    await waitFor(
      async () =>
        answered + (await db.transcript.count({ where: { accountId: { in: ids } } })) >= opts.requests,
      { timeout: 15 * 60_000, interval: 250, message: 'every request to be stored' },
    );
    const storedS = (Date.now() - t0) / 1000;
    let waitingMax = (await memory(pid)).rss;
    for (let t = 0; t < opts.holdMs; t += 250) {
      await new Promise((r) => setTimeout(r, 250));
      waitingMax = Math.max(waitingMax, (await memory(pid)).rss);
    }
    const peak = (await memory(pid)).peak;
    for (const c of calls) c.hangUp();
    const refused = (await Promise.all(calls.map((c) => c.status))).filter((s) => s !== 0);
    console.log(
      `${opts.requests} concurrent POST /v1/audio/transcriptions, ${opts.fileMiB} MiB files, ` +
        `${accounts.length} accounts (${PER_ACCOUNT} waiting each), ${opts.s3 ? 'S3 driver (S3Proxy)' : 'local driver'}, ` +
        `API ${opts.api ?? 'apps/api/dist/main.js'}`,
    );
    console.log(`  stored and waiting: ${opts.requests - refused.length} after ${storedS.toFixed(1)} s`);
    if (refused.length) {
      console.log(`  answered before the bench hung up: ${refused.join(' ')}`);
      // What the API logged for them (errors only, each message once).
      const errors = api.logs.filter((l) => Number(l.level) >= 50);
      const seen = new Set(
        errors.map((l) => JSON.stringify((l.err as { message?: string })?.message ?? l.msg)),
      );
      for (const m of [...seen].slice(0, 5)) console.log(`  API error: ${m}`);
    }
    console.log(
      `  API RSS: ${idle.rss.toFixed(0)} MB idle, ${waitingMax.toFixed(0)} MB while all wait, ` +
        `peak ${peak.toFixed(0)} MB (goal < 300 MB)`,
    );
  } finally {
    api.kill('SIGTERM');
    await api.exited;
    await db.$disconnect();
    await rm(storage, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
