import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { type Audio, type SampleBlocks, WavBlocks, memoryBlocks } from '../audio/wav-reader';
import { clampCount, countBounds } from '../clustering/count-bounds';
import type { DiarizationResult, DiarizeOptions } from '../diarizer';
import { relabel, type Segment, sameSpeakers } from '../timeline';
import {
  assignWindow,
  type EmbeddingClusteringOptions,
  normalise,
  speakerCentroids,
  voicesHeardTogether,
} from './embedding-clustering';
import { fillCount } from './fill-count';
import { relabelLongTurns } from './long-turns';
import { Fbank, FBANK_DIMS, FRAME_SHIFT, segmentSpan, subtractMean } from './fbank';
import { NeuralSession } from './onnx-session';

const SAMPLE_RATE = 16000;
/** segmentation-3.0: 10 s windows, 589 frames every 270 samples, 991-sample receptive field. */
const WINDOW = 160_000;
const SEG_FRAMES = 589;
const SEG_STEP = 270;
const SEG_HALF_FIELD = 991 / 2;
const LOCAL = 3;
/** segmentation-3.0's frame grid, in samples at 16 kHz: frame `f` of a window at `start` is centred on `start + f * step + halfField`. */
export const SEGMENTATION = {
  window: WINDOW,
  frames: SEG_FRAMES,
  step: SEG_STEP,
  halfField: SEG_HALF_FIELD,
  local: LOCAL,
};
/** Powerset class -> local speakers (itertools.combinations order, as pyannote's Powerset). */
const POWERSET: number[][] = [[], [0], [1], [2], [0, 1], [0, 2], [1, 2]];

export interface NeuralDiarizerOptions {
  /** Folder holding diarization/segmentation-3.0.onnx and diarization/campplus.onnx. Default: HARK_MODELS_DIR, else <repo>/../shared/models. */
  modelsDir?: string;
  /** Segmentation window step in seconds. Default 2 (80% overlap; see README). */
  step?: number;
  /** onnxruntime intra-op threads. Default min(2, cores). */
  threads?: number;
  /** Windows per segmentation batch. Default 8. */
  batch?: number;
  /** A local speaker is embedded from at least this much speech, in seconds (clean speech preferred). Default 0.3. */
  minEmbedSpeech?: number;
  /** Only local speakers with this much clean (non-overlapped) speech, or the frames `trainOn` names, train the clustering. Default 1 s. */
  minClusterSpeech?: number;
  /** At most this many seconds of a local speaker (the middle, contiguous frames) go into its embedding. Default 3. */
  maxEmbedSpeech?: number;
  /**
   * Frames a local speaker is embedded from: 'clean' (it speaks alone; the default) or 'dominant'
   * (alone, or in a two-speaker frame where the segmentation finds it likelier alone than the other).
   */
  embedFrames?: 'clean' | 'dominant';
  /** Which seconds `minClusterSpeech` counts: 'clean' (default) or 'preferred' (the frames `embedFrames` picks). */
  trainOn?: 'clean' | 'preferred';
  /**
   * Windows where the segmentation hears two or three voices at once, each with `minClusterSpeech`
   * of clean speech and at least this cosine distance apart, set a floor on the speaker count
   * (see `voicesHeardTogether`). 0 disables. Default 0.4.
   */
  coexistDistance?: number;
  /**
   * Single-speaker segments of 3 s or more are embedded again in pieces of about 1.5 s; a piece
   * goes to another speaker whose centroid is closer than its own by more than this (cosine).
   * Negative disables. Default 0.1.
   */
  relabelMargin?: number;
  /**
   * Where one voice is the likeliest class but the two-voice classes together have more than this
   * probability, the timeline takes the likeliest two-voice class instead (the hard argmax
   * under-counts overlap). Embeddings still come from the argmax decoding. 1 disables. Default 0.3.
   */
  overlapProbability?: number;
  clustering?: EmbeddingClusteringOptions;
}

export function defaultModelsDir(): string {
  return process.env['HARK_MODELS_DIR'] ?? resolve(__dirname, '../../../../../shared/models');
}

interface LocalSpeaker {
  window: number;
  local: number;
  embedding: Float32Array;
  /** Seconds that count for `minClusterSpeech` (clean, or preferred with trainOn 'preferred'). */
  training: number;
}

/**
 * Overlap-aware diarization in the manner of pyannote's: sliding 10 s segmentation-3.0 windows,
 * powerset decoding to up to 3 local speakers per window, one CAM++ embedding per (window, local
 * speaker) from the frames where that speaker speaks alone, global clustering, and a timeline
 * rebuilt from the per-window activations with the per-frame speaker count (two speakers in
 * overlapped speech). Same surface as `Diarizer`.
 */
export class NeuralDiarizer {
  private readonly session: NeuralSession;
  private readonly opts: Required<Omit<NeuralDiarizerOptions, 'modelsDir' | 'clustering'>>;
  private readonly clustering: EmbeddingClusteringOptions;
  private readonly fbank = new Fbank();

  constructor(options: NeuralDiarizerOptions = {}) {
    const dir = join(options.modelsDir ?? defaultModelsDir(), 'diarization');
    this.opts = {
      step: options.step ?? 2,
      threads: options.threads ?? Math.min(2, availableParallelism()),
      batch: options.batch ?? 8,
      minEmbedSpeech: options.minEmbedSpeech ?? 0.3,
      minClusterSpeech: options.minClusterSpeech ?? 1,
      maxEmbedSpeech: options.maxEmbedSpeech ?? 3,
      embedFrames: options.embedFrames ?? 'clean',
      trainOn: options.trainOn ?? 'clean',
      coexistDistance: options.coexistDistance ?? 0.4,
      relabelMargin: options.relabelMargin ?? 0.1,
      overlapProbability: options.overlapProbability ?? 0.3,
    };
    this.clustering = options.clustering ?? {};
    this.session = new NeuralSession(
      { segmentation: join(dir, 'segmentation-3.0.onnx'), embedding: join(dir, 'campplus.onnx') },
      this.opts.threads,
    );
  }

  /**
   * Diarizes the WAV at `wavPath`, read a batch of windows at a time (and each span it embeds
   * again when it gets there): memory does not grow with the file's length, where the whole file
   * as floats was 230 MB an hour, 2.3 GB for 10 h beside whisper-cli (bench/der/README.md,
   * "Memory on long files").
   */
  async diarize(wavPath: string, options: DiarizeOptions): Promise<DiarizationResult> {
    const wav = await WavBlocks.open(wavPath);
    try {
      return await this.diarizeBlocks(wav, options);
    } finally {
      await wav.close();
    }
  }

  /** Audio already in memory (benchmarks, tests). */
  diarizeAudio(audio: Audio, options: DiarizeOptions): Promise<DiarizationResult> {
    return this.diarizeBlocks(memoryBlocks(audio), options);
  }

  async diarizeBlocks(wav: SampleBlocks, { speakers, signal }: DiarizeOptions): Promise<DiarizationResult> {
    if (wav.sampleRate !== SAMPLE_RATE)
      throw new Error(`diarization needs ${SAMPLE_RATE} Hz audio, got ${wav.sampleRate}`);
    const bounds = countBounds(speakers);
    signal?.throwIfAborted();
    const length = wav.length;
    const starts = windowStarts(length, Math.round(this.opts.step * SAMPLE_RATE));
    // Per window, 589 x 3 hard activations (1 byte each: 2 MB per hour at a 2 s step): the argmax,
    // which the embeddings use, and what the timeline is rebuilt from (the argmax, with two voices
    // where overlap is likely enough; the same array when `overlapProbability` is 1).
    const activity: Uint8Array[] = [];
    const heard: Uint8Array[] = [];
    const locals: LocalSpeaker[] = [];
    for (let b = 0; b < starts.length; b += this.opts.batch) {
      const batchStarts = starts.slice(b, b + this.opts.batch);
      // The batch's windows overlap: one read covers them all.
      const first = batchStarts[0]!;
      const block = await wav.read(first, batchStarts[batchStarts.length - 1]! + WINDOW - first);
      const input = new Float32Array(batchStarts.length * WINDOW);
      batchStarts.forEach((s, i) => input.set(block.subarray(s - first, s - first + WINDOW), i * WINDOW));
      const logProbs = await this.session.segment(input, batchStarts.length, signal);
      for (let i = 0; i < batchStarts.length; i++) {
        const w = b + i;
        const valid = Math.min(SEG_FRAMES, frameCount(length - batchStarts[i]!));
        const lp = logProbs.subarray(i * SEG_FRAMES * 7, (i + 1) * SEG_FRAMES * 7);
        activity.push(decode(lp, valid));
        heard.push(withLikelyOverlap(lp, activity[w]!, valid, this.opts.overlapProbability));
        const prefer =
          this.opts.embedFrames === 'dominant' ? dominant(lp, activity[w]!) : alone(activity[w]!);
        const at = batchStarts[i]! - first;
        const windowSamples = block.subarray(at, at + WINDOW);
        locals.push(...(await this.embedWindow(windowSamples, w, activity[w]!, prefer, signal)));
      }
    }
    signal?.throwIfAborted();
    const train = locals.filter((l) => l.training >= this.opts.minClusterSpeech);
    // Voices the segmentation hears side by side are different people, however alike the
    // clustering finds them: that many speakers at least (within the asked bounds).
    const floor =
      this.opts.coexistDistance > 0
        ? voicesHeardTogether(
            byWindow(train).map((group) => group.map((l) => l.embedding)),
            this.opts.coexistDistance,
          )
        : 0;
    // Local speakers too short to train may still be a quiet person a caller's count asks for.
    const trained = new Set(train.length >= 2 ? train : locals);
    const centroids = speakerCentroids(
      [...trained].map((l) => l.embedding),
      { min: clampCount(floor, bounds), max: bounds.max },
      this.clustering,
      locals.filter((l) => !trained.has(l)).map((l) => l.embedding),
    );
    if (centroids.length === 0) return { segments: [], speakerCount: 0 };
    // Local speaker -> global cluster, distinct within a window.
    const assignment = starts.map(() => new Int32Array(LOCAL).fill(-1));
    for (const group of byWindow(locals)) {
      const labels = assignWindow(
        group.map((l) => l.embedding),
        centroids,
      );
      group.forEach((l, g) => (assignment[l.window]![l.local] = labels[g]!));
    }
    let segments = reconstruct(starts, heard, assignment, centroids.length, length, bounds.min);
    if (this.opts.relabelMargin >= 0 && centroids.length > 1)
      segments = await relabelLongTurns(segments, centroids, this.opts.relabelMargin, (start, end) =>
        this.embedSpan(wav, start, end, signal),
      );
    // An asked count the segmentation never heard that many voices for: split voices to meet it.
    segments = await fillCount(segments, bounds.min, (start, end) => this.embedSpan(wav, start, end, signal));
    const named = relabel(segments);
    return { segments: named, speakerCount: new Set(named.flatMap((s) => s.speakers)).size };
  }

  /**
   * Where anyone speaks, from the segmentation alone (no embeddings), in the WAV at a path (or audio in memory):
   * 10 s windows every `step` seconds (default 5, so each instant is seen by two), the argmax
   * decoded, and a frame is speech where the windows covering it hear a voice on average
   * (rounded). The file is read a batch of windows at a time, so memory does not grow with its
   * length. A fifth of `diarize`'s segmentation work and none of its CAM++ work: the speech gate
   * of transcripts without speakers (over fifteen real meeting excerpts it finds the same words
   * in silence as the whole timeline does; bench/der/README.md, "Words in silence").
   */
  async speech(input: string | Audio, { step = 5, signal }: { step?: number; signal?: AbortSignal } = {}) {
    const wav = typeof input === 'string' ? await WavBlocks.open(input) : memoryBlocks(input);
    try {
      if (wav.sampleRate !== SAMPLE_RATE)
        throw new Error(`speech detection needs ${SAMPLE_RATE} Hz audio, got ${wav.sampleRate}`);
      const starts = windowStarts(wav.length, Math.round(step * SAMPLE_RATE));
      const activity: Uint8Array[] = [];
      for (let b = 0; b < starts.length; b += this.opts.batch) {
        signal?.throwIfAborted();
        const batchStarts = starts.slice(b, b + this.opts.batch);
        const first = batchStarts[0]!;
        const block = await wav.read(first, batchStarts[batchStarts.length - 1]! + WINDOW - first);
        const input = new Float32Array(batchStarts.length * WINDOW);
        batchStarts.forEach((s, i) => input.set(block.subarray(s - first, s - first + WINDOW), i * WINDOW));
        const logProbs = await this.session.segment(input, batchStarts.length, signal);
        batchStarts.forEach((start, i) => {
          const valid = Math.min(SEG_FRAMES, frameCount(wav.length - start));
          activity.push(decode(logProbs.subarray(i * SEG_FRAMES * 7, (i + 1) * SEG_FRAMES * 7), valid));
        });
      }
      const everyone = starts.map(() => new Int32Array(LOCAL).fill(0));
      return reconstruct(starts, activity, everyone, 1, wav.length).map(({ start, end }) => ({ start, end }));
    } finally {
      await wav.close();
    }
  }

  async close(): Promise<void> {
    await this.session.close();
  }

  /** CAM++ embedding (L2-normalised) of the audio from `start` to `end` seconds, read from `wav`. */
  private async embedSpan(wav: SampleBlocks, start: number, end: number, signal?: AbortSignal) {
    const { from, count } = segmentSpan(start, end, wav.length);
    const features = subtractMean(this.fbank.compute(await wav.read(from, count)));
    return normalise(await this.session.embed(features, signal));
  }

  /**
   * CAM++ embeddings of the window's local speakers (`samples`: the window's, shorter at the end
   * of the file), from their preferred frames (`prefer`: clean, or dominant) where there are enough.
   */
  private async embedWindow(
    samples: Float32Array,
    window: number,
    act: Uint8Array,
    prefer: Uint8Array,
    signal?: AbortSignal,
  ): Promise<LocalSpeaker[]> {
    const fb = this.fbank.compute(samples);
    const frames = fb.length / FBANK_DIMS;
    const out: LocalSpeaker[] = [];
    for (let s = 0; s < LOCAL; s++) {
      const clean: number[] = [];
      const preferred: number[] = [];
      const any: number[] = [];
      for (let f = 0; f < frames; f++) {
        const centre = f * FRAME_SHIFT + 200;
        const sf = Math.min(SEG_FRAMES - 1, Math.max(0, Math.round((centre - SEG_HALF_FIELD) / SEG_STEP)));
        if (!act[sf * LOCAL + s]) continue;
        any.push(f);
        if (act[sf * LOCAL + ((s + 1) % LOCAL)] === 0 && act[sf * LOCAL + ((s + 2) % LOCAL)] === 0)
          clean.push(f);
        if (prefer[sf * LOCAL + s]) preferred.push(f);
      }
      const minFrames = this.opts.minEmbedSpeech * 100;
      const use = preferred.length >= minFrames ? preferred : any;
      if (use.length < minFrames) continue;
      const picked = centre(use, Math.round(this.opts.maxEmbedSpeech * 100));
      const feats = new Float32Array(picked.length * FBANK_DIMS);
      picked.forEach((f, i) => feats.set(fb.subarray(f * FBANK_DIMS, (f + 1) * FBANK_DIMS), i * FBANK_DIMS));
      const embedding = normalise(await this.session.embed(subtractMean(feats), signal));
      const trained = this.opts.trainOn === 'clean' ? clean.length : preferred.length;
      out.push({ window, local: s, embedding, training: trained / 100 });
    }
    return out;
  }
}

/** Local speakers grouped by window (they are made window by window, so a window's are adjacent). */
function byWindow(locals: LocalSpeaker[]): LocalSpeaker[][] {
  const groups: LocalSpeaker[][] = [];
  for (const l of locals) {
    const last = groups[groups.length - 1];
    if (last && last[0]!.window === l.window) last.push(l);
    else groups.push([l]);
  }
  return groups;
}

/** Window starts every `step` samples, plus one aligned to the end; one (zero-padded) window for short audio. */
export function windowStarts(length: number, step: number): number[] {
  if (length <= WINDOW) return [0];
  const starts: number[] = [];
  for (let s = 0; s + WINDOW <= length; s += step) starts.push(s);
  if (starts[starts.length - 1]! + WINDOW < length) starts.push(length - WINDOW);
  return starts;
}

/** Segmentation frames whose receptive field starts inside `samples` samples. */
function frameCount(samples: number): number {
  return Math.max(0, Math.ceil(samples / SEG_STEP));
}

/**
 * Hard powerset decoding: argmax class per frame -> 0/1 activity of the 3 local speakers. With
 * `overlap` under 1, a frame whose argmax is one voice takes the likeliest two-voice class when
 * the three two-voice classes together have more than `overlap` probability (`withLikelyOverlap`).
 */
export function decode(logProbs: Float32Array, validFrames: number, overlap = 1): Uint8Array {
  const act = new Uint8Array(SEG_FRAMES * LOCAL);
  for (let f = 0; f < validFrames; f++) {
    let best = 0;
    for (let c = 1; c < 7; c++) if (logProbs[f * 7 + c]! > logProbs[f * 7 + best]!) best = c;
    for (const s of POWERSET[best]!) act[f * LOCAL + s] = 1;
  }
  return withLikelyOverlap(logProbs, act, validFrames, overlap);
}

/**
 * The argmax activity `act` with a second voice wherever it has one voice and the three two-voice
 * classes together have more than `overlap` probability: that frame takes the likeliest of them.
 * `act` itself when `overlap` is 1 or more (the hard argmax under-counts overlap; see the option).
 */
function withLikelyOverlap(
  logProbs: Float32Array,
  act: Uint8Array,
  validFrames: number,
  overlap: number,
): Uint8Array {
  if (overlap >= 1) return act;
  const out = act.slice();
  for (let f = 0; f < validFrames; f++) {
    if (act[f * LOCAL]! + act[f * LOCAL + 1]! + act[f * LOCAL + 2]! !== 1) continue;
    let pair = 4;
    let mass = 0;
    for (let c = 4; c < 7; c++) {
      mass += Math.exp(logProbs[f * 7 + c]!);
      if (logProbs[f * 7 + c]! > logProbs[f * 7 + pair]!) pair = c;
    }
    if (mass <= overlap) continue;
    out.fill(0, f * LOCAL, (f + 1) * LOCAL);
    for (const s of POWERSET[pair]!) out[f * LOCAL + s] = 1;
  }
  return out;
}

/** Frames where a local speaker speaks alone (hard decoding). */
function alone(act: Uint8Array): Uint8Array {
  const out = new Uint8Array(act.length);
  for (let f = 0; f < SEG_FRAMES; f++) {
    const n = act[f * LOCAL]! + act[f * LOCAL + 1]! + act[f * LOCAL + 2]!;
    if (n === 1) for (let s = 0; s < LOCAL; s++) out[f * LOCAL + s] = act[f * LOCAL + s]!;
  }
  return out;
}

/**
 * Frames where a local speaker is the dominant voice: it speaks alone, or it is one of two and
 * the segmentation finds it likelier alone than the other one ({k} >= {j} among the classes).
 */
export function dominant(logProbs: Float32Array, act: Uint8Array): Uint8Array {
  const out = alone(act);
  for (let f = 0; f < SEG_FRAMES; f++) {
    const on = [0, 1, 2].filter((s) => act[f * LOCAL + s]);
    if (on.length !== 2) continue;
    const [a, b] = on as [number, number];
    const [pa, pb] = [logProbs[f * 7 + 1 + a]!, logProbs[f * 7 + 1 + b]!];
    out[f * LOCAL + (pa >= pb ? a : b)] = 1;
  }
  return out;
}

/** The middle `max` items: frames stay contiguous (CAM++ convolves over time), away from the window edges. */
function centre(items: number[], max: number): number[] {
  if (items.length <= max) return items;
  const from = Math.floor((items.length - max) / 2);
  return items.slice(from, from + max);
}

/**
 * pyannote's reconstruction on the global 16.875 ms frame grid: each global speaker's score is
 * the mean, over the windows covering a frame, of its assigned local speakers' activity; the
 * frame's speaker count is the rounded mean local count; the frame gets that many speakers, best
 * scores first. Runs of equal speaker sets become segments. With fewer than `minSpeakers` speakers
 * in the result (a count the caller asked for), a speaker that won no frame takes the frames its
 * own local speakers are active in from the weakest speaker there (most-voted such speaker first):
 * the windows that heard it are outvoted by their neighbours, but the caller said it is there.
 */
export function reconstruct(
  starts: number[],
  activity: Uint8Array[],
  assignment: Int32Array[],
  k: number,
  length: number,
  minSpeakers = 0,
): Segment<number>[] {
  const total = Math.ceil(length / SEG_STEP);
  const score = new Float32Array(total * k);
  const countSum = new Float32Array(total);
  const covered = new Uint16Array(total);
  starts.forEach((start, w) => {
    const offset = Math.round(start / SEG_STEP);
    const act = activity[w]!;
    const map = assignment[w]!;
    for (let f = 0; f < SEG_FRAMES; f++) {
      const g = offset + f;
      if (g >= total || f * SEG_STEP >= length - start) break;
      covered[g]!++;
      for (let s = 0; s < LOCAL; s++) {
        if (!act[f * LOCAL + s]) continue;
        countSum[g]!++;
        if (map[s]! >= 0) score[g * k + map[s]!]! += 1;
      }
    }
  });
  // Each frame's speakers, at most LOCAL of them (-1: none); each speaker's frames and votes.
  const chosen = new Int16Array(total * LOCAL).fill(-1);
  const framesOf = new Int32Array(k);
  const votes = new Float64Array(k);
  for (let g = 0; g < total; g++) {
    for (let c = 0; c < k; c++) votes[c]! += score[g * k + c]!;
    const n = covered[g]! > 0 ? Math.round(countSum[g]! / covered[g]!) : 0;
    if (n === 0) continue;
    const order = Array.from({ length: k }, (_, c) => c).filter((c) => score[g * k + c]! > 0);
    order.sort((a, b) => score[g * k + b]! - score[g * k + a]!);
    order.slice(0, Math.min(n, LOCAL)).forEach((c, i) => {
      chosen[g * LOCAL + i] = c;
      framesOf[c]!++;
    });
  }
  const present = () => framesOf.filter((f) => f > 0).length;
  if (present() < minSpeakers) {
    const missing = Array.from({ length: k }, (_, c) => c).filter((c) => framesOf[c] === 0);
    missing.sort((a, b) => votes[b]! - votes[a]!);
    const forced = new Set<number>();
    for (const c of missing) {
      if (present() >= minSpeakers) break;
      forced.add(c);
      for (let g = 0; g < total; g++) {
        if (score[g * k + c]! === 0 || chosen.subarray(g * LOCAL, (g + 1) * LOCAL).includes(c)) continue;
        // The weakest of the frame's speakers, sparing those forced in and any left with one frame.
        let weakest = -1;
        for (let i = 0; i < LOCAL; i++) {
          const x = chosen[g * LOCAL + i]!;
          if (x < 0 || forced.has(x) || framesOf[x]! <= 1) continue;
          if (weakest < 0 || score[g * k + x]! < score[g * k + chosen[g * LOCAL + weakest]!]!) weakest = i;
        }
        if (weakest < 0) continue;
        framesOf[chosen[g * LOCAL + weakest]!]!--;
        chosen[g * LOCAL + weakest] = c;
        framesOf[c]!++;
      }
    }
  }
  const segments: Segment<number>[] = [];
  let current: Segment<number> | undefined;
  const frameTime = (g: number) => (g * SEG_STEP + SEG_HALF_FIELD) / SAMPLE_RATE;
  for (let g = 0; g < total; g++) {
    const speakers = Array.from(chosen.subarray(g * LOCAL, (g + 1) * LOCAL))
      .filter((c) => c >= 0)
      .sort((a, b) => a - b);
    const t0 = Math.max(0, frameTime(g) - SEG_STEP / 2 / SAMPLE_RATE);
    const t1 = Math.min(length / SAMPLE_RATE, frameTime(g) + SEG_STEP / 2 / SAMPLE_RATE);
    if (current && sameSpeakers(current.speakers, speakers)) current.end = t1;
    else {
      if (current && current.speakers.length > 0) segments.push(current);
      current = { start: t0, end: t1, speakers };
    }
  }
  if (current && current.speakers.length > 0) segments.push(current);
  return segments;
}
