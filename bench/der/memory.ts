// Peak memory of the neural diarizer on a long file of real speech, as the worker reads it now (a
// batch of windows at a time: `diarize(path)`) and as it read it before (the whole file into
// memory: `readWav`, then `diarizeAudio`), each in a process of its own, in one run:
//
//   pnpm --filter @hark/bench-der exec tsx memory.ts [minutes=60] [--blocks-only]
//
// The file is the real meeting excerpts (HARK_EVAL_DIR, default ../shared/eval/diar) joined in
// turn to the asked length, each pass at another gain (as `run.ts --long`), written to a temp
// WAV in pieces. Each process loads the models first (a 30 s excerpt), then diarizes the file
// with `speakers: true`; it prints its peak RSS (getrusage), its RSS before, the time and the
// count. Models: HARK_MODELS_DIR.
import { execFileSync } from 'node:child_process';
import { open, mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { NeuralDiarizer, readWav } from '@hark/diarization';

const SAMPLE_RATE = 16000;
const MB = 2 ** 20;

interface Run {
  mode: 'blocks' | 'whole';
  seconds: number;
  rssBeforeMb: number;
  peakRssMb: number;
  speakers: number;
  segments: number;
}

/** The excerpts listed in the eval set's manifest. */
async function excerpts(evalDir: string): Promise<string[]> {
  const manifest = (await readFile(join(evalDir, 'manifest.tsv'), 'utf8')).trim().split('\n').slice(1);
  return manifest.map((line) => join(evalDir, line.split('\t')[0]!));
}

/** The excerpts joined in turn to `minutes`, each pass at another gain, written as 16-bit WAV. */
async function writeLongWav(evalDir: string, minutes: number, path: string): Promise<void> {
  const parts = await Promise.all((await excerpts(evalDir)).map((p) => readWav(p)));
  const total = minutes * 60 * SAMPLE_RATE;
  const file = await open(path, 'w');
  try {
    const header = Buffer.alloc(44);
    header.write('RIFF', 0, 'ascii');
    header.writeUInt32LE(36 + total * 2, 4);
    header.write('WAVEfmt ', 8, 'ascii');
    header.writeUInt32LE(16, 16);
    header.writeUInt16LE(1, 20);
    header.writeUInt16LE(1, 22);
    header.writeUInt32LE(SAMPLE_RATE, 24);
    header.writeUInt32LE(SAMPLE_RATE * 2, 28);
    header.writeUInt16LE(2, 32);
    header.writeUInt16LE(16, 34);
    header.write('data', 36, 'ascii');
    header.writeUInt32LE(total * 2, 40);
    await file.write(header);
    for (let at = 0, i = 0; at < total; i++) {
      const part = parts[i % parts.length]!.samples;
      const gain = 0.6 + (0.4 * ((i * 7) % 5)) / 4;
      const n = Math.min(part.length, total - at);
      const pcm = Buffer.alloc(n * 2);
      for (let j = 0; j < n; j++)
        pcm.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(part[j]! * gain * 32768))), j * 2);
      await file.write(pcm);
      at += n;
    }
  } finally {
    await file.close();
  }
}

/** In the child: warm up on one excerpt, then diarize the file one way. */
async function child(mode: Run['mode'], path: string, warmUp: string): Promise<void> {
  const diarizer = new NeuralDiarizer();
  await diarizer.diarize(warmUp, { speakers: true });
  const rssBefore = process.memoryUsage().rss;
  const start = performance.now();
  const result =
    mode === 'blocks'
      ? await diarizer.diarize(path, { speakers: true })
      : await diarizer.diarizeAudio(await readWav(path), { speakers: true });
  const run: Run = {
    mode,
    seconds: (performance.now() - start) / 1000,
    rssBeforeMb: rssBefore / MB,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    speakers: result.speakerCount,
    segments: result.segments.length,
  };
  await diarizer.close();
  console.log(JSON.stringify(run));
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const evalDir = process.env['HARK_EVAL_DIR'] ?? resolve(__dirname, '../../../shared/eval/diar');
  if (argv[0] === '--child') return child(argv[1] as Run['mode'], argv[2]!, argv[3]!);
  const minutes = Number(argv.find((a) => /^\d+$/.test(a)) ?? 60);
  const modes: Run['mode'][] = argv.includes('--blocks-only') ? ['blocks'] : ['blocks', 'whole'];
  const dir = await mkdtemp(join(tmpdir(), 'hark-der-memory-'));
  try {
    const path = join(dir, 'long.wav');
    await writeLongWav(evalDir, minutes, path);
    const warmUp = (await excerpts(evalDir))[0]!;
    console.log(
      `neural diarization of ${minutes} min of real speech (${((minutes * 60 * SAMPLE_RATE * 2) / MB).toFixed(0)} MB of WAV); ${cpus().length} CPUs; load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    for (const mode of modes) {
      const out = execFileSync(
        process.execPath,
        [...process.execArgv, __filename, '--child', mode, path, warmUp],
        {
          encoding: 'utf8',
          maxBuffer: 16 * MB,
        },
      );
      const run = JSON.parse(out.trim().split('\n').pop()!) as Run;
      console.log(
        `${run.mode.padEnd(6)} peak RSS ${run.peakRssMb.toFixed(0)} MB (RSS before ${run.rssBeforeMb.toFixed(0)} MB, models loaded); ${run.seconds.toFixed(1)} s, RTF ${(run.seconds / (minutes * 60)).toFixed(4)}; ${run.speakers} speakers, ${run.segments} segments; load average ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
