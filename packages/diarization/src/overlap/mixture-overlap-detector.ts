import type { Audio } from '../audio/wav-reader';
import { throwIfAborted } from '../abort';
import { Gaussian, GaussianStats } from '../clustering/gaussian';
import { type FeatureMatrix, mfcc, type MfccOptions } from '../features/mfcc';
import type { Segment } from '../timeline';
import type { OverlapDetector } from './overlap-detector';

export interface MixtureOverlapOptions {
  /** Smoothed log-likelihood ratio (mixture vs single voice) above which a frame is overlap. Default 0. */
  threshold?: number;
  /** Moving-average span of the ratio, in seconds. Default 0.5. */
  smoothing?: number;
  /** Overlap shorter than this is dropped, in seconds. Default 0.3. */
  minDuration?: number;
  /** A neighbouring turn further than this is not a candidate second speaker, in seconds. Default 1. */
  maxGap?: number;
  /** Audio per voice (and per synthetic mixture) used to fit the models, in seconds. Default 60. */
  maxModelSeconds?: number;
  /** Default 40 cepstra over 80 mel bands: coarser features (20/40) missed most overlap. */
  mfcc?: MfccOptions;
}

interface Candidate {
  a: number;
  b: number;
}

/**
 * Finds overlapped speech with models built from the recording itself: one Gaussian per voice
 * over the MFCC frames of its own turns, and one per pair of adjacent voices over a synthetic
 * mixture (their audio added sample by sample). A frame inside a turn of A that is better
 * explained by "A + B" than by A or B alone, over half a second, is overlap of A and B.
 * Only the speakers of the previous and next turns are candidates: overlap in conversation is
 * an interruption or an early start, and the restriction keeps false alarms low.
 * On the generated set (40/80 MFCC, threshold 0): 5.6 s of 8.8 s of overlap found, 0.2 s false.
 */
export class MixtureOverlapDetector implements OverlapDetector {
  private readonly opts: Required<Omit<MixtureOverlapOptions, 'mfcc'>> & { mfcc: MfccOptions };

  constructor(options: MixtureOverlapOptions = {}) {
    this.opts = {
      threshold: options.threshold ?? 0,
      smoothing: options.smoothing ?? 0.5,
      minDuration: options.minDuration ?? 0.3,
      maxGap: options.maxGap ?? 1,
      maxModelSeconds: options.maxModelSeconds ?? 60,
      mfcc: { ceps: 40, mels: 80, ...options.mfcc },
    };
  }

  async detect(audio: Audio, segments: Segment<number>[], signal?: AbortSignal): Promise<Segment<number>[]> {
    const turns = segments.filter((s) => s.speakers.length === 1);
    const candidates = turns.map((_, i) => this.neighbours(turns, i));
    const pairs = uniquePairs(candidates.flat());
    if (pairs.length === 0) return segments;
    const voices = new Map<number, Float32Array>();
    for (const id of new Set(pairs.flatMap((p) => [p.a, p.b])))
      voices.set(id, this.voiceAudio(audio, turns, id));
    const feats = mfcc(audio.samples, audio.sampleRate, this.opts.mfcc);
    const single = new Map(
      [...voices].map(([id, x]) => [id, fit(mfcc(x, audio.sampleRate, this.opts.mfcc))]),
    );
    throwIfAborted(signal);
    const mixed = new Map(
      pairs.map((p) => [
        key(p),
        fit(mfcc(mix(voices.get(p.a)!, voices.get(p.b)!), audio.sampleRate, this.opts.mfcc)),
      ]),
    );
    throwIfAborted(signal);

    const out: Segment<number>[] = segments.filter((s) => s.speakers.length !== 1);
    turns.forEach((turn, i) => {
      const options = candidates[i]!;
      if (options.length === 0) {
        out.push(turn);
        return;
      }
      out.push(...this.splitTurn(turn, options, feats, single, mixed));
    });
    return out.sort((x, y) => x.start - y.start);
  }

  /** The speaker ids of the previous and next turns (when close and different) paired with this one. */
  private neighbours(turns: Segment<number>[], i: number): Candidate[] {
    const self = turns[i]!;
    const id = self.speakers[0]!;
    const near = [turns[i - 1], turns[i + 1]].filter(
      (t): t is Segment<number> =>
        !!t && t.speakers[0] !== id && Math.max(t.start - self.end, self.start - t.end) <= this.opts.maxGap,
    );
    return uniquePairs(
      near.map((t) => ({ a: Math.min(id, t.speakers[0]!), b: Math.max(id, t.speakers[0]!) })),
    );
  }

  /** Up to `maxModelSeconds` of a speaker's turns, 0.1 s trimmed at each edge (boundaries are fuzzy). */
  private voiceAudio(audio: Audio, turns: Segment<number>[], id: number): Float32Array {
    const sr = audio.sampleRate;
    const limit = Math.round(this.opts.maxModelSeconds * sr);
    const parts: Float32Array[] = [];
    let length = 0;
    for (const t of turns) {
      if (t.speakers[0] !== id || t.end - t.start < 0.4 || length >= limit) continue;
      const part = audio.samples.subarray(Math.round((t.start + 0.1) * sr), Math.round((t.end - 0.1) * sr));
      parts.push(part.subarray(0, limit - length));
      length += Math.min(part.length, limit - length);
    }
    const out = new Float32Array(length);
    let at = 0;
    for (const p of parts) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }

  private splitTurn(
    turn: Segment<number>,
    candidates: Candidate[],
    feats: FeatureMatrix,
    single: Map<number, Gaussian | undefined>,
    mixed: Map<string, Gaussian | undefined>,
  ): Segment<number>[] {
    const options = candidates.filter((p) => single.get(p.a) && single.get(p.b) && mixed.get(key(p)));
    const hop = feats.hopSeconds;
    const from = Math.max(0, Math.round(turn.start / hop));
    const to = Math.min(feats.frames, Math.round(turn.end / hop));
    if (to - from < 2 || options.length === 0) return [turn];
    // Per frame and candidate pair: log p(x | a+b) - max(log p(x | a), log p(x | b)).
    const ratio = options.map(() => new Float64Array(to - from));
    for (let f = from; f < to; f++) {
      const offset = f * feats.dims + 1;
      options.forEach((p, c) => {
        const [ga, gb, gm] = [single.get(p.a)!, single.get(p.b)!, mixed.get(key(p))!];
        const one = Math.max(ga.logLikelihood(feats.data, offset), gb.logLikelihood(feats.data, offset));
        ratio[c]![f - from] = gm.logLikelihood(feats.data, offset) - one;
      });
    }
    const smooth = ratio.map((r) => movingAverage(r, Math.max(1, Math.round(this.opts.smoothing / hop))));
    const label = new Int32Array(to - from).fill(-1);
    for (let i = 0; i < label.length; i++) {
      let best = this.opts.threshold;
      smooth.forEach((r, c) => {
        if (r[i]! > best) [best, label[i]] = [r[i]!, c];
      });
    }
    const out: Segment<number>[] = [];
    for (let i = 0; i < label.length; ) {
      let j = i;
      while (j < label.length && label[j] === label[i]) j++;
      const start = i === 0 ? turn.start : (from + i) * hop;
      const end = j === label.length ? turn.end : (from + j) * hop;
      const c = label[i]!;
      const overlap = c >= 0 && end - start >= this.opts.minDuration;
      const speakers = overlap ? [options[c]!.a, options[c]!.b] : turn.speakers;
      const last = out[out.length - 1];
      if (last && last.speakers.join() === speakers.join()) last.end = end;
      else out.push({ start, end, speakers: [...speakers] });
      i = j;
    }
    return out;
  }
}

function fit(feats: FeatureMatrix): Gaussian | undefined {
  const stats = new GaussianStats(feats.dims - 1);
  for (let f = 0; f < feats.frames; f++) stats.add(feats.data, f * feats.dims + 1);
  // Under ~4 s of frames a 39-dimensional full covariance is mostly ridge: no model.
  return stats.count >= 10 * stats.dims ? new Gaussian(stats) : undefined;
}

/** Two voices added at their recorded levels; the shorter decides the length. */
function mix(a: Float32Array, b: Float32Array): Float32Array {
  const out = new Float32Array(Math.min(a.length, b.length));
  for (let i = 0; i < out.length; i++) out[i] = a[i]! + b[i]!;
  return out;
}

function movingAverage(x: Float64Array, span: number): Float64Array {
  const out = new Float64Array(x.length);
  const half = Math.floor(span / 2);
  let sum = 0;
  let n = 0;
  // Running window [i - half, i + half], clipped at the ends.
  for (let i = 0; i < Math.min(half, x.length); i++) [sum, n] = [sum + x[i]!, n + 1];
  for (let i = 0; i < x.length; i++) {
    if (i + half < x.length) [sum, n] = [sum + x[i + half]!, n + 1];
    if (i - half - 1 >= 0) [sum, n] = [sum - x[i - half - 1]!, n - 1];
    out[i] = sum / n;
  }
  return out;
}

const key = (p: Candidate): string => `${p.a}+${p.b}`;

function uniquePairs(pairs: Candidate[]): Candidate[] {
  return [...new Map(pairs.map((p) => [key(p), p])).values()];
}
