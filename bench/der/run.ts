// DER bench: generates the espeak-ng set, diarizes each file and prints DER (missed, false
// alarm, confusion), speaker-count accuracy for `speakers: true` and the real-time factor of
// diarization alone (model loading excluded). Needs espeak-ng and sox.
//
//   pnpm --filter @hark/bench-der bench                      (once bench/* is a workspace)
//   pnpm exec esbuild bench/der/run.ts --bundle --platform=node --packages=external \
//     --outfile=bench/der/dist/run.js && node bench/der/dist/run.js [--keep] [--dir DIR]
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
// Relative imports until bench/* joins pnpm-workspace.yaml; then `@hark/diarization`.
import { createDiarizer, type DiarizationResult, readWav } from '../../packages/diarization/src';
import { generateScenario } from '../../packages/diarization/test/fixtures/make-audio';
import { BENCH_SCENARIOS } from '../../packages/diarization/test/fixtures/scenarios';
import { fileDer, type DerResult } from './src/der';
import { readRttm, type Turn } from './src/rttm';

function toTurns(file: string, result: DiarizationResult): Turn[] {
  return result.segments.flatMap((s) =>
    s.speakers.map((speaker) => ({ file, start: s.start, end: s.end, speaker })),
  );
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`.padStart(6);

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const dirArg = args.indexOf('--dir');
  const dir = dirArg >= 0 ? args[dirArg + 1]! : await mkdtemp(join(tmpdir(), 'hark-der-'));
  const keep = args.includes('--keep') || dirArg >= 0;
  try {
    const t0 = performance.now();
    const files = [];
    for (const scenario of BENCH_SCENARIOS) files.push(await generateScenario(scenario, dir));
    console.log(
      `generated ${files.length} files in ${((performance.now() - t0) / 1000).toFixed(1)} s (${dir})`,
    );

    const diarizer = createDiarizer();
    const load = performance.now();
    await diarizer.diarize(files[0]!.wavPath, { speakers: true }); // loads the ONNX session
    console.log(
      `warm-up (model load + first file): ${((performance.now() - load) / 1000).toFixed(2)} s; ${cpus().length} CPUs`,
    );

    const sums = { est: zero(), oracle: zero() };
    let audioSeconds = 0;
    let diarizeSeconds = 0;
    let countsRight = 0;
    console.log('\nfile              dur   ref est |   DER   miss     FA   conf | oracle-count DER');
    for (const file of files) {
      const reference = await readRttm(file.rttmPath);
      const refCount = new Set(reference.map((t) => t.speaker)).size;
      const duration = (await readWav(file.wavPath)).samples.length / 16000;
      const start = performance.now();
      const estimated = await diarizer.diarize(file.wavPath, { speakers: true });
      diarizeSeconds += (performance.now() - start) / 1000;
      audioSeconds += duration;
      const oracle = await diarizer.diarize(file.wavPath, { speakers: refCount });
      const e = fileDer(reference, toTurns(file.id, estimated));
      const o = fileDer(reference, toTurns(file.id, oracle));
      add(sums.est, e);
      add(sums.oracle, o);
      if (estimated.speakerCount === refCount) countsRight++;
      console.log(
        `${file.id.padEnd(16)} ${duration.toFixed(1).padStart(5)} ${String(refCount).padStart(5)} ${String(estimated.speakerCount).padStart(3)} | ${pct(e.der)} ${pct(rate(e.missed, e))} ${pct(rate(e.falseAlarm, e))} ${pct(rate(e.confusion, e))} | ${pct(o.der)}`,
      );
    }
    const e = sums.est;
    const o = sums.oracle;
    console.log(
      `${'TOTAL'.padEnd(16)} ${audioSeconds.toFixed(0).padStart(5)}           | ${pct(rate(e.missed + e.falseAlarm + e.confusion, e))} ${pct(rate(e.missed, e))} ${pct(rate(e.falseAlarm, e))} ${pct(rate(e.confusion, e))} | ${pct(rate(o.missed + o.falseAlarm + o.confusion, o))}`,
    );
    console.log(`\nspeaker count right (speakers: true): ${countsRight}/${files.length}`);
    console.log(
      `real-time factor (speakers: true, diarization only): ${(diarizeSeconds / audioSeconds).toFixed(4)} (${diarizeSeconds.toFixed(2)} s for ${audioSeconds.toFixed(0)} s of audio)`,
    );
  } finally {
    if (!keep) await rm(dir, { recursive: true, force: true });
  }
}

type Sum = Pick<DerResult, 'total' | 'missed' | 'falseAlarm' | 'confusion'>;
const zero = (): Sum => ({ total: 0, missed: 0, falseAlarm: 0, confusion: 0 });
function add(sum: Sum, r: Sum): void {
  sum.total += r.total;
  sum.missed += r.missed;
  sum.falseAlarm += r.falseAlarm;
  sum.confusion += r.confusion;
}
const rate = (x: number, r: Sum): number => (r.total > 0 ? x / r.total : 0);

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
