import type { Audio } from '../audio/wav-reader';
import { throwIfAborted } from '../abort';
import { deltas, type FeatureMatrix, mfcc, type MfccOptions } from '../features/mfcc';
import type { EmbeddingExtractor, TimeWindow } from './embedding-extractor';

/** MFCC settings default to 40 cepstra over 80 mel bands: finer than the usual 20/40, which keeps
 * some pitch-harmonic detail and measurably separated more espeak voices (purity 0.95 -> 0.99). */
export interface MfccStatsOptions extends MfccOptions {
  /** Keep c0 (log energy). Default false: loudness says more about the microphone than the voice. */
  keepEnergy?: boolean;
}

/**
 * A download-free stand-in for a neural speaker embedding: per window, the mean and standard
 * deviation of MFCCs and their deltas, after cepstral mean/variance normalisation over the
 * recording's speech. Separates clearly different voices; a trained model will do far better on
 * similar ones, and plugs in through the same `EmbeddingExtractor` interface.
 */
export class MfccStatsExtractor implements EmbeddingExtractor {
  constructor(private readonly options: MfccStatsOptions = {}) {}

  async embed(audio: Audio, windows: TimeWindow[], signal?: AbortSignal): Promise<Float32Array[]> {
    throwIfAborted(signal);
    const base = mfcc(audio.samples, audio.sampleRate, { ceps: 40, mels: 80, ...this.options });
    throwIfAborted(signal);
    const firstCep = this.options.keepEnergy ? 0 : 1;
    const feats = concat(dropLeading(base, firstCep), dropLeading(deltas(base), firstCep));
    const ranges = windows.map((w) => frameRange(feats, w));
    cmvn(feats, ranges);
    return ranges.map(([from, to]) => meanStd(feats, from, to));
  }
}

function frameRange(feats: FeatureMatrix, w: TimeWindow): [number, number] {
  const from = Math.max(0, Math.floor(w.start / feats.hopSeconds));
  const to = Math.min(feats.frames, Math.max(from + 1, Math.round(w.end / feats.hopSeconds)));
  return [Math.min(from, to - 1), to];
}

/** Normalises each dimension to zero mean, unit variance over the frames of the windows (speech). */
function cmvn(feats: FeatureMatrix, ranges: [number, number][]): void {
  const { dims, data } = feats;
  const speech = new Uint8Array(feats.frames);
  for (const [from, to] of ranges) speech.fill(1, from, to);
  const sum = new Float64Array(dims);
  const sq = new Float64Array(dims);
  let n = 0;
  for (let f = 0; f < feats.frames; f++) {
    if (!speech[f]) continue;
    n++;
    for (let d = 0; d < dims; d++) {
      const v = data[f * dims + d]!;
      sum[d] = sum[d]! + v;
      sq[d] = sq[d]! + v * v;
    }
  }
  if (n === 0) return;
  for (let d = 0; d < dims; d++) {
    const mean = sum[d]! / n;
    const std = Math.sqrt(Math.max(sq[d]! / n - mean * mean, 1e-8));
    for (let f = 0; f < feats.frames; f++) data[f * dims + d] = (data[f * dims + d]! - mean) / std;
  }
}

function meanStd(feats: FeatureMatrix, from: number, to: number): Float32Array {
  const { dims, data } = feats;
  const out = new Float32Array(dims * 2);
  const n = Math.max(to - from, 1);
  for (let d = 0; d < dims; d++) {
    let s = 0;
    let q = 0;
    for (let f = from; f < to; f++) {
      const v = data[f * dims + d]!;
      s += v;
      q += v * v;
    }
    const mean = s / n;
    out[d] = mean;
    out[dims + d] = Math.sqrt(Math.max(q / n - mean * mean, 0));
  }
  return out;
}

function dropLeading(m: FeatureMatrix, count: number): FeatureMatrix {
  if (count === 0) return m;
  const dims = m.dims - count;
  const data = new Float32Array(m.frames * dims);
  for (let f = 0; f < m.frames; f++)
    data.set(m.data.subarray(f * m.dims + count, (f + 1) * m.dims), f * dims);
  return { ...m, dims, data };
}

function concat(a: FeatureMatrix, b: FeatureMatrix): FeatureMatrix {
  const dims = a.dims + b.dims;
  const data = new Float32Array(a.frames * dims);
  for (let f = 0; f < a.frames; f++) {
    data.set(a.data.subarray(f * a.dims, (f + 1) * a.dims), f * dims);
    data.set(b.data.subarray(f * b.dims, (f + 1) * b.dims), f * dims + a.dims);
  }
  return { ...a, dims, data };
}
