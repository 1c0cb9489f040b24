import type { Audio } from '../audio/wav-reader';
import { throwIfAborted } from '../abort';
import type { TimeWindow } from '../embedding/embedding-extractor';
import { mfcc, type MfccOptions } from '../features/mfcc';
import { averageLinkage, clustersBelow, cosineDistance, cutTree } from './agglomerative';
import type { CountBounds } from './count-bounds';
import { deltaBic, GaussianStats } from './gaussian';
import type { ClusterInput, SpeakerClusterer } from './speaker-clusterer';

export interface BicClustererOptions {
  /** Cosine distance (on recording-centred embeddings) below which windows are pre-grouped. Default 0.6. */
  threshold?: number;
  /** BIC penalty weight; tuned on the generated espeak set (19/20 counts right at 2). Default 2. */
  lambda?: number;
  /** Above this many windows, the first pass clusters an evenly spaced subset. Default 3000. */
  maxAhcWindows?: number;
  /** Frame features for the Gaussian models. Default 20 cepstra over 40 mel bands (c0 dropped). */
  mfcc?: MfccOptions;
}

/**
 * Two passes. (1) Average-linkage AHC on window embeddings over-clusters: small, pure groups.
 * (2) Groups merge while the Bayesian information criterion prefers one full-covariance
 * Gaussian over their MFCC frames to two. The count falls out of (2): window embeddings alone
 * gave no threshold or eigengap that held across 1 to 5 speakers (recording-centred cosine
 * distances shrink as the number of speakers grows), whereas BIC compares thousands of frames
 * per group and is affine invariant. Bounds are honoured by forcing or stopping merges.
 */
export class BicClusterer implements SpeakerClusterer {
  private readonly threshold: number;
  private readonly lambda: number;
  private readonly maxAhcWindows: number;

  constructor(private readonly options: BicClustererOptions = {}) {
    this.threshold = options.threshold ?? 0.6;
    this.lambda = options.lambda ?? 2;
    this.maxAhcWindows = options.maxAhcWindows ?? 3000;
  }

  async cluster(
    { audio, windows, embeddings }: ClusterInput,
    bounds: CountBounds,
    signal?: AbortSignal,
  ): Promise<number[]> {
    const n = windows.length;
    if (n <= 1) return new Array<number>(n).fill(0);
    const initial = this.preGroup(centre(embeddings), bounds);
    throwIfAborted(signal);
    const groups = frameStats(audio, windows, initial, this.options.mfcc);
    throwIfAborted(signal);
    const root = mergeByBic(groups, bounds, this.lambda);
    return renumber(fillGaps(initial.map((g) => (groups[g]!.count > 0 ? root[g]! : -1))));
  }

  private preGroup(vectors: Float32Array[], bounds: CountBounds): number[] {
    const n = vectors.length;
    const step = Math.max(1, Math.ceil(n / this.maxAhcWindows));
    const subset = step === 1 ? vectors : vectors.filter((_, i) => i % step === 0);
    const merges = averageLinkage(subset);
    const k = Math.min(
      subset.length,
      Math.max(clustersBelow(merges, subset.length, this.threshold), bounds.min),
    );
    const labels = cutTree(merges, subset.length, k);
    if (step === 1) return labels;
    // Windows left out of the first pass join the nearest group centroid.
    const centroids = Array.from({ length: k }, () => new Float32Array(vectors[0]!.length));
    subset.forEach((v, i) => {
      const c = centroids[labels[i]!]!;
      v.forEach((x, d) => (c[d] = c[d]! + x));
    });
    return vectors.map((v) => {
      let best = 0;
      centroids.forEach((c, g) => {
        if (cosineDistance(v, c) < cosineDistance(v, centroids[best]!)) best = g;
      });
      return best;
    });
  }
}

function centre(vectors: Float32Array[]): Float32Array[] {
  const dims = vectors[0]!.length;
  const mean = new Float64Array(dims);
  for (const v of vectors) for (let d = 0; d < dims; d++) mean[d] = mean[d]! + v[d]! / vectors.length;
  return vectors.map((v) => Float32Array.from(v, (x, d) => x - mean[d]!));
}

/** Gaussian statistics per group over MFCC frames; a frame belongs to the window centred nearest. */
function frameStats(
  audio: Audio,
  windows: TimeWindow[],
  labels: number[],
  options: MfccOptions = {},
): GaussianStats[] {
  const feats = mfcc(audio.samples, audio.sampleRate, options);
  const dims = feats.dims - 1; // c0 is loudness, not voice
  const groups = Array.from({ length: Math.max(...labels) + 1 }, () => new GaussianStats(dims));
  const owner = new Int32Array(feats.frames).fill(-1);
  const distance = new Float64Array(feats.frames).fill(Infinity);
  windows.forEach((w, i) => {
    const centre = (w.start + w.end) / 2;
    const last = Math.min(feats.frames, Math.round(w.end / feats.hopSeconds));
    for (let f = Math.max(0, Math.floor(w.start / feats.hopSeconds)); f < last; f++) {
      const d = Math.abs(f * feats.hopSeconds - centre);
      if (d < distance[f]!) {
        distance[f] = d;
        owner[f] = labels[i]!;
      }
    }
  });
  for (let f = 0; f < feats.frames; f++) {
    if (owner[f]! >= 0) groups[owner[f]!]!.add(feats.data, f * feats.dims + 1);
  }
  return groups;
}

/** Greedy BIC merging; returns, for each input group, the group it ended up in. */
function mergeByBic(groups: GaussianStats[], bounds: CountBounds, lambda: number): number[] {
  const root = groups.map((_, i) => i);
  const alive = groups.map((g, i) => (g.count > 0 ? i : -1)).filter((i) => i >= 0);
  const stats = [...groups];
  const logDet = stats.map((g) => g.logDet());
  const pair = (a: number, b: number) => deltaBic(stats[a]!, stats[b]!, lambda, [logDet[a]!, logDet[b]!]);
  const cache = new Map<string, number>();
  const key = (a: number, b: number) => (a < b ? `${a},${b}` : `${b},${a}`);
  while (alive.length > 1) {
    let best: [number, number] | undefined;
    let bestScore = Infinity;
    for (let i = 0; i < alive.length; i++) {
      for (let j = i + 1; j < alive.length; j++) {
        const [a, b] = [alive[i]!, alive[j]!];
        let score = cache.get(key(a, b));
        if (score === undefined) cache.set(key(a, b), (score = pair(a, b)));
        if (score < bestScore) [bestScore, best] = [score, [a, b]];
      }
    }
    const mustMerge = alive.length > bounds.max;
    if (!best || (!mustMerge && (alive.length <= bounds.min || bestScore >= 0))) break;
    const [a, b] = best;
    stats[a] = stats[a]!.merged(stats[b]!);
    logDet[a] = stats[a].logDet();
    alive.splice(alive.indexOf(b), 1);
    for (const c of alive) cache.delete(key(a, c));
    root.forEach((r, i) => {
      if (r === b) root[i] = a;
    });
  }
  return root;
}

/** A window whose frames all sit nearer other windows' centres takes its previous (or next) neighbour's label. */
function fillGaps(labels: number[]): number[] {
  const out = [...labels];
  for (let i = 1; i < out.length; i++) if (out[i]! < 0) out[i] = out[i - 1]!;
  for (let i = out.length - 2; i >= 0; i--) if (out[i]! < 0) out[i] = out[i + 1]!;
  return out.map((l) => Math.max(l, 0));
}

/** Labels 0..k-1 in order of first appearance. */
function renumber(labels: number[]): number[] {
  const ids = new Map<number, number>();
  return labels.map((l) => {
    if (!ids.has(l)) ids.set(l, ids.size);
    return ids.get(l)!;
  });
}
