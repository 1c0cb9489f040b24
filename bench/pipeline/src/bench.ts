// See run.sh. Figures are printed, never asserted.
import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { exit, median, peakRssMb, run, toWav16k, withStack } from '@hark/bench-common';

const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const THREADS = String(process.env.WHISPER_THREADS ?? os.availableParallelism());

async function bareWhisper(audio: string, dir: string): Promise<number> {
  // The same work the worker asks of whisper-cli: a 16 kHz mono WAV in, full JSON out.
  const wav = path.join(dir, 'bare.wav');
  await toWav16k(audio, wav);
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
  const env = {
    PORT: '0',
    HARK_STORAGE_DIR: path.join(dir, 'storage'),
    HARK_REDIS_PREFIX: `hark-bench-pipe-${process.pid}`,
    WHISPER_THREADS: THREADS,
    HARK_RETENTION_SWEEP_MS: '0',
  };
  await withStack({ env, workerReadyMs: 30_000 }, async ({ db, worker, upload, createToDone }) => {
    const bare: number[] = [];
    const hark: number[] = [];
    const wake: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      bare.push(await bareWhisper(audio, dir));
      const uploadId = await upload(bytes);
      const t0 = performance.now();
      const id = await createToDone(uploadId);
      const answeredAt = Date.now();
      hark.push(performance.now() - t0);
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
  });
}

main().catch(exit);
