// What the end-to-end benches (bench/engine e2e, bench/pipeline) share: real API and worker
// processes (built apps, through startApp) with a topped-up account, uploads and create-to-done
// over HTTP, the worker's peak RSS, medians, and ffmpeg's 16 kHz mono WAV.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { type Db, createDb } from '@hark/db';
import { type AppProcess, type TestAccount, createTestAccount, startApp } from '@hark/testing';

export const run = promisify(execFile);

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The process's peak resident set (VmHWM) in MB. */
export async function peakRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** ffmpeg to a 16 kHz mono WAV, as the worker decodes (shared with the fault suite's stand-in engine). */
export { toWav16k } from '@hark/testing/faults';

export interface Stack {
  db: Db;
  acct: TestAccount;
  worker: AppProcess;
  /** POST /v1/uploads of `bytes`; resolves with the upload id. */
  upload(bytes: Buffer): Promise<string>;
  /** Creates a transcript of the upload and waits (GET ?wait=60) until it is done; resolves with its id. */
  createToDone(uploadId: string): Promise<string>;
}

/**
 * Runs `fn` against a real API and worker (env: the apps' settings on top of this process's)
 * and a fresh account on DATABASE_URL with 100000 credits; stops both apps (SIGTERM) afterwards.
 */
export async function withStack<T>(
  opts: { env: Record<string, string>; workerReadyMs: number },
  fn: (stack: Stack) => Promise<T>,
): Promise<T> {
  const db = createDb({ databaseUrl: process.env.DATABASE_URL!, poolSize: 2 });
  const acct = await createTestAccount(db, process.env.HARK_SECRET!, { toppedUp: true, credits: 100000 });
  const api = startApp('api', opts.env);
  const worker = startApp('worker', opts.env);
  try {
    const port = (await api.waitForLog('api listening')).port as number;
    await worker.waitForLog('worker ready', opts.workerReadyMs);
    const base = `http://127.0.0.1:${port}/v1`;
    return await fn({
      db,
      acct,
      worker,
      async upload(bytes) {
        const sha = createHash('sha256').update(bytes).digest('hex');
        const up = await fetch(`${base}/uploads?sha256=${sha}`, {
          method: 'POST',
          headers: acct.auth,
          body: bytes,
        });
        return ((await up.json()) as { data: { id: string } }).data.id;
      },
      async createToDone(uploadId) {
        const res = await fetch(`${base}/transcripts`, {
          method: 'POST',
          headers: { ...acct.auth, 'Content-Type': 'application/json' },
          body: JSON.stringify({ uploadId }),
        });
        const id = ((await res.json()) as { data: { id: string } }).data.id;
        let status = 'processing';
        while (status === 'processing') {
          const r = await fetch(`${base}/transcripts/${id}?wait=60`, { headers: acct.auth });
          status = ((await r.json()) as { data: { status: string } }).data.status;
        }
        if (status !== 'done') throw new Error(`transcript ended ${status}`);
        return id;
      },
    });
  } finally {
    api.kill('SIGTERM');
    worker.kill('SIGTERM');
    await Promise.all([api.exited, worker.exited]);
    await db.$disconnect();
  }
}

/** Logs the error and exits 1: the benches' `main().catch(exit)`. */
export function exit(e: unknown): never {
  console.error(e);
  process.exit(1);
}
