// Hark end to end (see ../README.md): create-to-done through real API and worker processes with
// the worker's default engine configuration, next to the bare engine on the same audio (the same
// WhisperEngine, model and decoding, on the decoded WAV) and faster-whisper timed as a whole
// process that loads its model; interleaved run by run. Figures are printed, never asserted.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { exit, median, peakRssMb, run, toWav16k, withStack } from '@hark/bench-common';
import { WhisperEngine, dtwPreset, prepareModel } from '@hark/media';

const env = process.env;
// BENCH_SMOKE=1 (run.sh --smoke): the 10 s file once, no warm-up: the bench still runs.
const SMOKE = env.BENCH_SMOKE === '1';
const RUNS = Number(env.BENCH_E2E_RUNS ?? (SMOKE ? 1 : 3));
const THREADS = env.BENCH_THREADS ?? '2';
const WORK = env.BENCH_WORK!;
const MODEL_CACHE = path.join(WORK, 'model-cache');

const s = (ms: number) => (ms / 1000).toFixed(2);

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

async function main(): Promise<void> {
  const clip60 = { name: '60 s clip', src: path.join(env.BENCH_AUDIO_DIR!, 'speech-60s.wav') };
  const clip10 = { name: '10 s file', src: path.join(WORK, 'speech-10s.wav') };
  await toWav16k(clip60.src, clip10.src, ['-t', '10']);
  const clips = SMOKE ? [clip10] : [clip60, clip10];
  const wavs = clips.map((c) => path.join(WORK, `e2e-${path.basename(c.src)}`));
  for (const [i, c] of clips.entries()) await toWav16k(c.src, wavs[i]!);
  // The bare engine is what the worker builds from its defaults (WHISPER_QUANTIZE q8_0, DEFAULT_DECODING).
  const model = await prepareModel({
    modelPath: env.BENCH_BASE_MODEL!,
    quantize: 'q8_0',
    quantizeBin: path.join(path.dirname(env.WHISPER_BIN!), 'whisper-quantize'),
    cacheDir: MODEL_CACHE,
  });
  // The worker's decoding, DTW word timestamps included (its default since 2026-11-26), so the
  // overhead below is Hark's own path (probe, decode, the speech gate's pass, completion).
  const engine = new WhisperEngine({
    binaryPath: env.WHISPER_BIN!,
    modelPath: model.path,
    threads: Number(THREADS),
    modelName: 'whisper-base',
    dtwPreset: await dtwPreset(model.path),
  });

  const appEnv = {
    PORT: '0',
    HARK_STORAGE_DIR: path.join(WORK, 'storage'),
    HARK_TMP_DIR: path.join(WORK, 'worker-tmp'),
    HARK_MODEL_CACHE_DIR: MODEL_CACHE,
    HARK_REDIS_PREFIX: `hark-bench-engine-${process.pid}`,
    WHISPER_BIN: env.WHISPER_BIN!,
    WHISPER_MODEL: env.BENCH_BASE_MODEL!,
    WHISPER_THREADS: THREADS,
    HARK_RETENTION_SWEEP_MS: '0',
  };
  await withStack({ env: appEnv, workerReadyMs: 60_000 }, async ({ worker, upload, createToDone }) => {
    const uploads: string[] = [];
    for (const c of clips) uploads.push(await upload(await readFile(c.src)));
    const fw = (src: string) =>
      run(env.BENCH_FW_PYTHON!, [
        path.join(__dirname, '..', 'fw_run.py'),
        env.BENCH_FW_MODEL!,
        THREADS,
        path.join(WORK, 'e2e-fw.json'),
        src,
      ]);

    // One warm-up job, not counted: the first job pays for the worker's lazy imports.
    if (!SMOKE) await createToDone(uploads[1]!);
    const times = clips.map(() => ({ bare: [] as number[], hark: [] as number[], fw: [] as number[] }));
    for (let r = 0; r < RUNS; r++) {
      for (const [i, c] of clips.entries()) {
        times[i]!.bare.push(
          await timed(() => engine.transcribe({ wavPath: wavs[i]!, wordTimestamps: 'dtw' })),
        );
        times[i]!.hark.push(await timed(() => createToDone(uploads[i]!)));
        times[i]!.fw.push(await timed(() => fw(c.src)));
      }
    }
    console.log(
      `hark end to end: worker defaults (q8_0 from ${path.basename(env.BENCH_BASE_MODEL!)}, ${THREADS} threads), median of ${RUNS}`,
    );
    console.log(
      `  ${'audio'.padEnd(10)} ${'bare engine'.padStart(12)} ${'create->done'.padStart(13)} ${'overhead'.padStart(9)} ${'faster-whisper'.padStart(15)} ${'hark/fw'.padStart(8)}`,
    );
    for (const [i, c] of clips.entries()) {
      const t = times[i]!;
      const [b, h, f] = [median(t.bare), median(t.hark), median(t.fw)];
      console.log(
        `  ${c.name.padEnd(10)} ${s(b).padStart(10)} s ${s(h).padStart(11)} s ${s(h - b).padStart(7)} s ${s(f).padStart(13)} s ${(h / f).toFixed(2).padStart(8)}`,
      );
      console.log(
        `    runs: bare ${t.bare.map(s).join(', ')}; hark ${t.hark.map(s).join(', ')}; fw ${t.fw.map(s).join(', ')}`,
      );
    }
    console.log(
      `  worker (node) peak RSS: ${(await peakRssMb(worker.child.pid!)).toFixed(0)} MB; whisper-cli's is in the engine table above`,
    );
  });
}

main().catch(exit);
