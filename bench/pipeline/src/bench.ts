// See run.sh. Figures are printed, never asserted.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createDb } from '@hark/db';
import { createTestAccount, startApp } from '@hark/testing';

const run = promisify(execFile);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const THREADS = String(process.env.WHISPER_THREADS ?? os.availableParallelism());

async function peakRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function bareWhisper(audio: string, dir: string): Promise<number> {
  // The same work the worker asks of whisper-cli: a 16 kHz mono WAV in, full JSON out.
  const wav = path.join(dir, 'bare.wav');
  await run('ffmpeg', [
    '-y',
    '-v',
    'error',
    '-i',
    audio,
    '-ac',
    '1',
    '-ar',
    '16000',
    '-c:a',
    'pcm_s16le',
    wav,
  ]);
  const t0 = performance.now();
  await run(process.env.WHISPER_BIN!, [
    '-m',
    process.env.WHISPER_MODEL!,
    '-t',
    THREADS,
    '-l',
    'auto',
    '-ojf',
    '-of',
    path.join(dir, 'bare'),
    '-f',
    wav,
  ]);
  const ms = performance.now() - t0;
  await rm(wav, { force: true });
  await rm(path.join(dir, 'bare.json'), { force: true });
  return ms;
}

async function main(): Promise<void> {
  const audio = process.env.BENCH_AUDIO!;
  const dir = process.env.HARK_BENCH_DIR!;
  const bytes = await readFile(audio);
  const sha = createHash('sha256').update(bytes).digest('hex');
  const db = createDb({ databaseUrl: process.env.DATABASE_URL!, poolSize: 2 });
  const acct = await createTestAccount(db, process.env.HARK_SECRET!, { toppedUp: true, credits: 100000 });
  const env = {
    PORT: '0',
    HARK_STORAGE_DIR: path.join(dir, 'storage'),
    HARK_REDIS_PREFIX: `hark-bench-pipe-${process.pid}`,
    WHISPER_THREADS: THREADS,
    HARK_RETENTION_SWEEP_MS: '0',
  };
  const api = startApp('api', env);
  const worker = startApp('worker', env);
  try {
    const port = (await api.waitForLog('api listening')).port as number;
    await worker.waitForLog('worker ready', 30_000);
    const base = `http://127.0.0.1:${port}/v1`;
    const bare: number[] = [];
    const hark: number[] = [];
    const wake: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      bare.push(await bareWhisper(audio, dir));
      const up = await fetch(`${base}/uploads?sha256=${sha}`, {
        method: 'POST',
        headers: acct.auth,
        body: bytes,
      });
      const uploadId = ((await up.json()) as { data: { id: string } }).data.id;
      const t0 = performance.now();
      const created = await fetch(`${base}/transcripts`, {
        method: 'POST',
        headers: { ...acct.auth, 'Content-Type': 'application/json' },
        body: JSON.stringify({ uploadId }),
      });
      const id = ((await created.json()) as { data: { id: string } }).data.id;
      let status = 'processing';
      while (status === 'processing') {
        const res = await fetch(`${base}/transcripts/${id}?wait=60`, { headers: acct.auth });
        status = ((await res.json()) as { data: { status: string } }).data.status;
      }
      const answeredAt = Date.now();
      hark.push(performance.now() - t0);
      if (status !== 'done') throw new Error(`transcript ended ${status}`);
      const row = await db.transcript.findUniqueOrThrow({ where: { id }, select: { finishedAt: true } });
      wake.push(answeredAt - row.finishedAt!.getTime());
    }
    const b = median(bare);
    const h = median(hark);
    console.log(
      `pipeline: ${path.basename(audio)}, model ${path.basename(process.env.WHISPER_MODEL!)}, ${THREADS} threads, median of ${RUNS}`,
    );
    console.log(
      `  bare whisper-cli:           ${(b / 1000).toFixed(2)} s   (runs: ${bare.map((x) => (x / 1000).toFixed(2)).join(', ')})`,
    );
    console.log(
      `  hark create -> done:        ${(h / 1000).toFixed(2)} s   (runs: ${hark.map((x) => (x / 1000).toFixed(2)).join(', ')})`,
    );
    console.log(`  ratio:                      ${(h / b).toFixed(2)} (target <= 1.25)`);
    console.log(
      `  wait wake-up after commit:  ${median(wake)} ms median, ${Math.max(...wake)} ms max (target 50 ms)`,
    );
    console.log(
      `  worker peak RSS:            ${(await peakRssMb(worker.child.pid!)).toFixed(0)} MB (node process; whisper-cli runs as its own process)`,
    );
  } finally {
    api.kill('SIGTERM');
    worker.kill('SIGTERM');
    await Promise.all([api.exited, worker.exited]);
    await db.$disconnect();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
