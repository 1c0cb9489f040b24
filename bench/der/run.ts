// DER bench. One command prints the full table for both pipelines side by side:
//
//   pnpm --filter @hark/bench-der bench                 real meeting excerpts (the development set)
//   pnpm --filter @hark/bench-der bench -- --smoke      the first excerpt alone (the test command runs it)
//   pnpm --filter @hark/bench-der bench -- --espeak     generated espeak-ng dialogues (plumbing only)
//   pnpm --filter @hark/bench-der bench -- --meetings    the excerpts of one meeting joined into one file
//   pnpm --filter @hark/bench-der bench -- --long 60    one generated N-minute file: RTF, peak RSS, DER
//   pnpm --filter @hark/bench-der bench -- --peer       adds the peer: sherpa-onnx's pyannote-style pipeline on
//                                                       the same two models (src/sherpa-peer.ts; with --long, the peer alone)
//   pnpm --filter @hark/bench-der bench -- --oracle     adds the segmentation with an oracle clustering (a ceiling
//                                                       for any clustering; src/oracle-clustering.ts)
//   pnpm --filter @hark/bench-der bench -- --given-count  each file asked for its reference count
//                                                       (`speakers: n`) instead of estimating it
//   pnpm --filter @hark/bench-der bench -- --words      also the word diarization error rate (WDER) of
//                                                       whisper.cpp's words, labelled as the worker does
//                                                       (DTW word times; `--word-timing tokens` for the others;
//                                                       `--beam 5` decodes with a beam, the worker greedily;
//                                                       `--vad` decodes only the speech Silero VAD finds, WHISPER_VAD=on)
//                                                       (`--speech-steps 5,10`: the speech pass of plain
//                                                       transcripts at each step; the worker's: 5)
//
// Real set: /work/shared/eval/diar (HARK_EVAL_DIR overrides), RTTM + UEM, scored with and without
// a 0.25 s collar, overlap counted, error times summed over files. RTF is diarization alone
// (model loading excluded), 2 onnxruntime threads. Models: HARK_MODELS_DIR (default ../shared/models).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import {
  type Audio,
  createDiarizer,
  type DiarizationResult,
  labelWords,
  SPEECH_GATE_MARGIN,
  snapToSpeech,
  wordsNearSpeech,
  NeuralDiarizer,
  type NeuralDiarizerOptions,
  readWav,
} from '@hark/diarization';
import {
  DEFAULT_DECODING,
  DEFAULT_VAD,
  VAD_MODEL_FILE,
  dtwPreset,
  prepareModel,
  type TimedWord,
  WhisperEngine,
  type WordTimestamps,
} from '@hark/media';
import { BENCH_SCENARIOS, generateScenario } from '@hark/diarization/testing';
import { addTimes, type DerTimes, fileDer, zeroTimes } from './src/der';
import { clip, type EvalFile, joinMeetings, placeTurns } from './src/eval-set';
import { readRttm, type Turn } from './src/rttm';
import { OracleClustering } from './src/oracle-clustering';
import { SherpaPeer } from './src/sherpa-peer';
import { addEdges, describeErrors, edgeErrors, noEdges } from './src/word-onsets';
import { scoreWords, type WordScore } from './src/word-speakers';

interface Pipeline {
  name: string;
  diarizer: {
    diarizeAudio(a: Audio, o: { speakers: true | number }): Promise<DiarizationResult>;
    close(): Promise<void>;
  };
}

// `--neural` skips the classic pipeline; `--neural-options '{"embedFrames":"dominant"}'` passes
// NeuralDiarizerOptions (to compare variants on the same run).
const argv = process.argv.slice(2);
// `--given-count` asks each file for its reference speaker count (`speakers: n`), as a caller who
// knows how many people spoke; the default estimates it (`speakers: true`).
const givenCount = argv.includes('--given-count');
// `--speech-steps 5,10`: the steps of the segmentation-only speech pass that `--words` scores,
// one line each (the worker's: 5 s).
const speechStepsAt = argv.indexOf('--speech-steps');
const speechSteps = speechStepsAt >= 0 ? argv[speechStepsAt + 1]!.split(',').map(Number) : [5];
const optionsAt = argv.indexOf('--neural-options');
const neuralOptions = (optionsAt >= 0 ? JSON.parse(argv[optionsAt + 1]!) : {}) as NeuralDiarizerOptions;
// `--peer` adds the peer, sherpa-onnx's pyannote-style diarization on the same two models
// (src/sherpa-peer.ts; its virtualenv is made from PyPI on first use).
const modelsDir = (): string =>
  process.env['HARK_MODELS_DIR'] ?? resolve(__dirname, '../../../shared/models');
// `--oracle` adds the neural pipeline's segmentation with an oracle clustering (each local speaker
// named after the reference speaker it shares the most time with; src/oracle-clustering.ts): what
// no clustering or embedding after this segmentation can beat.
const pipelines = (files: EvalFile[]): Pipeline[] => [
  ...(argv.includes('--neural') ? [] : [{ name: 'classic', diarizer: createDiarizer() }]),
  { name: 'neural', diarizer: new NeuralDiarizer(neuralOptions) },
  ...(argv.includes('--peer')
    ? [{ name: 'sherpa', diarizer: new SherpaPeer(join(modelsDir(), 'diarization')) }]
    : []),
  ...(argv.includes('--oracle')
    ? [
        {
          name: 'oracle',
          diarizer: new OracleClustering(
            join(modelsDir(), 'diarization'),
            new Map(files.map((f) => [f.audio, clip(f.reference, f.uem)])),
            { step: neuralOptions.step, overlapProbability: neuralOptions.overlapProbability },
          ),
        },
      ]
    : []),
];

function toTurns(file: string, result: DiarizationResult): Turn[] {
  return result.segments.flatMap((s) =>
    s.speakers.map((speaker) => ({ file, start: s.start, end: s.end, speaker })),
  );
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`.padStart(6);
const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

const rate = (x: number, r: DerTimes): number => (r.total > 0 ? x / r.total : 0);
const der = (r: DerTimes): number => rate(r.missed + r.falseAlarm + r.confusion, r);

async function readEvalSet(dir: string): Promise<(EvalFile & { wavPath: string })[]> {
  const manifest = (await readFile(join(dir, 'manifest.tsv'), 'utf8')).trim().split('\n').slice(1);
  const files: (EvalFile & { wavPath: string })[] = [];
  for (const line of manifest) {
    const [wav, , , , , rttm, uem] = line.split('\t');
    const id = wav!.replace(/\.wav$/, '');
    const [, , a, b] = (await readFile(join(dir, uem!), 'utf8')).trim().split(/\s+/);
    files.push({
      id,
      wavPath: join(dir, wav!),
      audio: await readWav(join(dir, wav!)),
      reference: await readRttm(join(dir, rttm!)),
      uem: [Number(a), Number(b)],
    });
  }
  return files;
}

/**
 * The words whisper.cpp gives each file, as the worker runs it for a transcript with speakers:
 * whisper-cli from HARK_WHISPER_BIN (default <repo>/.hark/whisper/bin/whisper-cli), ggml-base.bin
 * from the models folder quantised to q8_0 by the worker's own `prepareModel` (kept in
 * .hark/models), the worker's decoding, English, words timed by `timing` (the worker: DTW);
 * only the words whose middle falls in the file's UEM.
 */
async function transcribeSet(
  files: (EvalFile & { wavPath: string })[],
  timing: WordTimestamps,
  beamSize: number,
  vad: boolean,
): Promise<Map<string, TimedWord[]>> {
  const models = modelsDir();
  const binaryPath =
    process.env['HARK_WHISPER_BIN'] ?? resolve(__dirname, '../../.hark/whisper/bin/whisper-cli');
  // The quantised model and the VAD model live where the worker's scripts put them.
  const cacheDir = resolve(__dirname, '../../.hark/models');
  const model = await prepareModel({
    modelPath: join(models, 'ggml-base.bin'),
    quantize: 'q8_0',
    quantizeBin: join(dirname(binaryPath), 'whisper-quantize'),
    cacheDir,
  });
  const engine = new WhisperEngine({
    binaryPath,
    modelPath: model.path,
    threads: Math.min(2, cpus().length),
    modelName: 'whisper-base',
    dtwPreset: await dtwPreset(model.path),
    decoding: { transcribe: { beamSize } },
    vad: vad ? { modelPath: join(cacheDir, VAD_MODEL_FILE), ...DEFAULT_VAD } : null,
  });
  const out = new Map<string, TimedWord[]>();
  const started = performance.now();
  for (const f of files) {
    const { words } = await engine.transcribe({ wavPath: f.wavPath, language: 'en', wordTimestamps: timing });
    const [a, b] = f.uem;
    out.set(
      f.id,
      words.filter((w) => (w.start + w.end) / 2 >= a && (w.start + w.end) / 2 <= b),
    );
  }
  const audio = files.reduce((sum, f) => sum + f.audio.samples.length / f.audio.sampleRate, 0);
  console.log(
    `engine: ${((performance.now() - started) / 1000).toFixed(1)} s for ${audio.toFixed(0)} s of audio (${vad ? 'VAD' : 'no VAD'}); load average ${load()}`,
  );
  return out;
}

async function scoreSet(
  files: EvalFile[],
  title: string,
  words: Map<string, TimedWord[]> | null = null,
): Promise<void> {
  const idWidth = Math.max(10, ...files.map((f) => f.id.length));
  console.log(`${title}: ${files.length} files; ${cpus().length} CPUs; load average ${load()}`);
  const rows: string[] = [];
  const summary: string[] = [];
  const wordRows: string[] = [];
  const gateRows: string[] = [];
  for (const { name, diarizer } of pipelines(files)) {
    await diarizer.diarizeAudio(files[0]!.audio, { speakers: true }); // loads the models
    if (diarizer instanceof SherpaPeer) diarizer.peerSeconds = 0;
    const sums = { c0: zeroTimes(), c25: zeroTimes() };
    let audioSeconds = 0;
    let seconds = 0;
    let countsRight = 0;
    const wordSum = { words: 0, scored: 0, wrong: 0, outside: 0 };
    const gatedSum = { words: 0, scored: 0, wrong: 0, outside: 0 };
    // Transcripts without speakers: the worker gates them by the segmentation-only speech pass.
    const plainSums = speechSteps.map(() => ({ words: 0, scored: 0, wrong: 0, outside: 0, seconds: 0 }));
    // Where words start and stop after silence: the engine's times, and snapped to the speech
    // the timeline and the first speech pass hear (`snapToSpeech`).
    const edges = {
      timeline: noEdges(),
      timelineSnapped: noEdges(),
      pass: noEdges(),
      passSnapped: noEdges(),
    };
    for (const f of files) {
      const refCount = new Set(f.reference.map((t) => t.speaker)).size;
      const start = performance.now();
      const result = await diarizer.diarizeAudio(f.audio, { speakers: givenCount ? refCount : true });
      seconds += (performance.now() - start) / 1000;
      audioSeconds += f.audio.samples.length / 16000;
      const ref = clip(f.reference, f.uem);
      const sys = clip(toTurns(f.id, result), f.uem);
      const e0 = fileDer(ref, sys, { collar: 0 });
      const e25 = fileDer(ref, sys, { collar: 0.25 });
      addTimes(sums.c0, e0);
      addTimes(sums.c25, e25);
      if (result.speakerCount === refCount) countsRight++;
      const fileWords = words?.get(f.id);
      if (fileWords) {
        const w = scoreWords(labelWords(fileWords, result.segments), ref, e0.mapping);
        // The worker's speech gate (HARK_SPEECH_GATE): the words the timeline comes near.
        const heard = wordsNearSpeech(fileWords, result.segments);
        const gated = scoreWords(labelWords(heard, result.segments), ref, e0.mapping);
        for (const k of ['words', 'scored', 'wrong', 'outside'] as const) {
          wordSum[k] += w[k];
          gatedSum[k] += gated[k];
        }
        if (diarizer instanceof NeuralDiarizer) {
          addEdges(edges.timeline, edgeErrors(heard, ref, f.uem));
          addEdges(edges.timelineSnapped, edgeErrors(snapToSpeech(heard, result.segments), ref, f.uem));
          for (const [n, step] of speechSteps.entries()) {
            const sum = plainSums[n]!;
            const t0 = performance.now();
            const speech = await diarizer.speech(f.audio, { step });
            sum.seconds += (performance.now() - t0) / 1000;
            const near = wordsNearSpeech(fileWords, speech);
            if (n === 0) {
              addEdges(edges.pass, edgeErrors(near, ref, f.uem));
              addEdges(edges.passSnapped, edgeErrors(snapToSpeech(near, speech), ref, f.uem));
            }
            const plain = scoreWords(labelWords(near, result.segments), ref, e0.mapping);
            for (const k of ['words', 'scored', 'wrong', 'outside'] as const) sum[k] += plain[k];
          }
        }
        wordRows.push(wordRow(name, f.id, idWidth, w));
      }
      rows.push(
        `${name.padEnd(8)} ${f.id.padEnd(idWidth)} ${String(refCount).padStart(3)} ${String(result.speakerCount).padStart(3)} | ${pct(e0.der)} ${pct(rate(e0.missed, e0))} ${pct(rate(e0.falseAlarm, e0))} ${pct(rate(e0.confusion, e0))} | ${pct(e25.der)}`,
      );
    }
    const { c0, c25 } = sums;
    rows.push(
      `${name.padEnd(8)} ${'TOTAL'.padEnd(idWidth)}         | ${pct(der(c0))} ${pct(rate(c0.missed, c0))} ${pct(rate(c0.falseAlarm, c0))} ${pct(rate(c0.confusion, c0))} | ${pct(der(c25))}`,
    );
    const wordTotal = { ...wordSum, wder: wordSum.scored > 0 ? wordSum.wrong / wordSum.scored : 0 };
    if (words) {
      wordRows.push(wordRow(name, 'TOTAL', idWidth, wordTotal));
      gateRows.push(
        `${name.padEnd(8)} speech gate (${SPEECH_GATE_MARGIN} s): drops ${wordSum.outside - gatedSum.outside} of ${wordSum.outside} words in reference silence, ${wordSum.scored - gatedSum.scored} of ${wordSum.scored} in reference speech; WDER after ${pct(gatedSum.scored > 0 ? gatedSum.wrong / gatedSum.scored : 0).trim()}`,
      );
      if (diarizer instanceof NeuralDiarizer) {
        for (const [what, e] of [
          ['gated by the timeline', edges.timeline],
          ['gated by and snapped to the timeline', edges.timelineSnapped],
          [`gated by the speech pass (${speechSteps[0]} s step)`, edges.pass],
          ['gated by and snapped to the speech pass', edges.passSnapped],
        ] as const)
          gateRows.push(
            `word edges after silence, ${what}: ${e.onsets} starts: ${describeErrors(e.onsetErrors)}; ${e.ends} ends: ${describeErrors(e.endErrors)}`,
          );
      }
      if (diarizer instanceof NeuralDiarizer)
        for (const [n, step] of speechSteps.entries()) {
          const p = plainSums[n]!;
          gateRows.push(
            `${name.padEnd(8)} speech pass, no speakers, ${step} s step (${SPEECH_GATE_MARGIN} s): drops ${wordSum.outside - p.outside} of ${wordSum.outside} words in reference silence, ${wordSum.scored - p.scored} of ${wordSum.scored} in reference speech; ${p.seconds.toFixed(2)} s for ${audioSeconds.toFixed(0)} s of audio`,
          );
        }
    }
    summary.push(
      `${name.padEnd(8)} DER ${pct(der(c0))} (collar 0), ${pct(der(c25))} (collar 0.25); count exact ${countsRight}/${files.length}; RTF ${(seconds / audioSeconds).toFixed(4)} (${seconds.toFixed(2)} s for ${audioSeconds.toFixed(0)} s${diarizer instanceof SherpaPeer ? `; ${diarizer.peerSeconds.toFixed(2)} s inside the peer` : ''})${words ? `; WDER ${pct(wordTotal.wder).trim()}` : ''}`,
    );
    summary.push(
      `${name.padEnd(8)} miss ${pct(rate(c0.missed, c0)).trim()} (collar 0): ${pct(rate(c0.missedUnheard, c0)).trim()} where it hears nobody, ${pct(rate(c0.missedOverlap, c0)).trim()} in overlap it under-counts; the reference has ${pct(rate(c0.beyondTwo, c0)).trim()} beyond two voices at once (segmentation-3.0's powerset labels at most two)`,
    );
    await diarizer.close();
  }
  console.log(`\npipeline ${'file'.padEnd(idWidth)} ref est | DER(0)   miss     FA   conf | DER(.25)`);
  for (const r of rows) console.log(r);
  if (words) {
    console.log(`\npipeline ${'file'.padEnd(idWidth)} words scored outside wrong |   WDER`);
    for (const r of wordRows) console.log(r);
    for (const r of gateRows) console.log(r);
  }
  console.log('');
  for (const s of summary) console.log(s);
  console.log(`load average after: ${load()}`);
}

function wordRow(name: string, id: string, idWidth: number, w: WordScore): string {
  const n = (x: number, width: number) => String(x).padStart(width);
  return `${name.padEnd(8)} ${id.padEnd(idWidth)} ${n(w.words, 5)} ${n(w.scored, 6)} ${n(w.outside, 7)} ${n(w.wrong, 5)} | ${pct(w.wder)}`;
}

async function espeakSet(dir: string): Promise<EvalFile[]> {
  const files: EvalFile[] = [];
  for (const scenario of BENCH_SCENARIOS) {
    const g = await generateScenario(scenario, dir);
    const audio = await readWav(g.wavPath);
    files.push({
      id: g.id,
      audio,
      reference: await readRttm(g.rttmPath),
      uem: [0, audio.samples.length / 16000],
    });
  }
  return files;
}

/**
 * Real speech repeated to `minutes` (the excerpts in turn, each pass at a different gain), with
 * the reference of what was joined: the same person keeps one name across the whole file.
 */
async function longFile(evalDir: string, minutes: number): Promise<{ audio: Audio; reference: Turn[] }> {
  const parts = await readEvalSet(evalDir);
  const total = minutes * 60 * 16000;
  const samples = new Float32Array(total);
  const reference: Turn[] = [];
  for (let at = 0, i = 0; at < total; i++) {
    const part = parts[i % parts.length]!;
    const gain = 0.6 + (0.4 * ((i * 7) % 5)) / 4;
    const n = Math.min(part.audio.samples.length, total - at);
    for (let j = 0; j < n; j++) samples[at + j] = part.audio.samples[j]! * gain;
    reference.push(...placeTurns(part, at / 16000, 'long', (at + n) / 16000));
    at += n;
  }
  return { audio: { samples, sampleRate: 16000 }, reference };
}

async function main(): Promise<void> {
  const evalDir = process.env['HARK_EVAL_DIR'] ?? resolve(__dirname, '../../../shared/eval/diar');
  const longAt = argv.indexOf('--long');
  if (argv.includes('--words') && (longAt >= 0 || argv.includes('--meetings') || argv.includes('--espeak')))
    throw new Error('--words scores the excerpts one by one: leave out --long, --meetings and --espeak');
  if (longAt >= 0) {
    const minutes = Number(argv[longAt + 1] ?? 60);
    const which = argv.includes('--classic') ? 'classic' : argv.includes('--peer') ? 'sherpa' : 'neural';
    const { audio, reference } = await longFile(evalDir, minutes);
    const p = pipelines([{ id: 'long', audio, reference, uem: [0, minutes * 60] }]).find(
      (x) => x.name === which,
    )!;
    const refCount = new Set(reference.map((t) => t.speaker)).size;
    const rssBefore = process.memoryUsage().rss;
    const start = performance.now();
    const result = await p.diarizer.diarizeAudio(audio, { speakers: givenCount ? refCount : true });
    const seconds = (performance.now() - start) / 1000;
    const e0 = fileDer(reference, toTurns('long', result), { collar: 0 });
    console.log(
      `${which}: ${minutes} min of audio in ${seconds.toFixed(1)} s, RTF ${(seconds / (minutes * 60)).toFixed(4)}; ${result.speakerCount} speakers (reference ${refCount}), ${result.segments.length} segments; DER ${pct(e0.der).trim()} (miss ${pct(rate(e0.missed, e0)).trim()}, FA ${pct(rate(e0.falseAlarm, e0)).trim()}, confusion ${pct(rate(e0.confusion, e0)).trim()}, collar 0); peak RSS ${(p.diarizer instanceof SherpaPeer ? p.diarizer.peakRssMb : process.resourceUsage().maxRSS / 1024).toFixed(0)} MB${p.diarizer instanceof SherpaPeer ? ' (the peer process)' : ''} (audio alone ${((audio.samples.length * 4) / 2 ** 20).toFixed(0)} MB, RSS before ${(rssBefore / 2 ** 20).toFixed(0)} MB); ${cpus().length} CPUs; load average ${load()}`,
    );
    await p.diarizer.close();
    return;
  }
  if (argv.includes('--espeak')) {
    const dir = await mkdtemp(join(tmpdir(), 'hark-der-'));
    try {
      await scoreSet(await espeakSet(dir), 'espeak-ng plumbing set');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    return;
  }
  if (argv.includes('--meetings')) {
    const meetings = joinMeetings(await readEvalSet(evalDir));
    await scoreSet(meetings, `real meeting excerpts joined by meeting (${evalDir})`);
    return;
  }
  // `--smoke`: the first excerpt alone, the test command's check that the bench runs to its figures.
  const files = (await readEvalSet(evalDir)).slice(0, argv.includes('--smoke') ? 1 : undefined);
  const timingAt = argv.indexOf('--word-timing');
  const asked = timingAt >= 0 ? argv[timingAt + 1] : 'dtw';
  if (asked !== 'dtw' && asked !== 'tokens') throw new Error(`--word-timing: dtw or tokens, not ${asked}`);
  const timing: WordTimestamps = asked;
  const beamAt = argv.indexOf('--beam');
  const beam = beamAt >= 0 ? Number(argv[beamAt + 1]) : DEFAULT_DECODING.beamSize;
  const vad = argv.includes('--vad');
  const words = argv.includes('--words') ? await transcribeSet(files, timing, beam, vad) : null;
  await scoreSet(
    files,
    `real meeting excerpts (${evalDir})${words ? `; words timed by ${timing}, beam ${beam}${vad ? ', VAD' : ''}` : ''}`,
    words,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
