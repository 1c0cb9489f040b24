import { averageLinkage, clustersBelow, cutTree } from '../clustering/agglomerative';
import { clampCount, type CountBounds } from '../clustering/count-bounds';

export interface EmbeddingClusteringOptions {
  /** Average-linkage cosine distance under which clusters merge. Default 0.5 (see README). */
  threshold?: number;
  /** At most this many embeddings enter the O(n^2) clustering; the rest are assigned to centroids. Default 1500. */
  maxCluster?: number;
  /** Clusters smaller than min(12, 10% of the clustered embeddings) do not count as speakers (pyannote's rule). */
  minClusterSize?: number;
}

/** L2-normalised copy (all-zero stays zero). */
export function normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  const s = n > 0 ? 1 / Math.sqrt(n) : 0;
  return v.map((x) => x * s);
}

export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/**
 * Speaker centroids (L2-normalised) from unit embeddings: average-linkage AHC on cosine distance
 * cut at `threshold`; clusters below the minimum size are not speakers (their members go to the
 * nearest centroid later); the count is then moved into `bounds` by re-cutting the tree. Memory
 * is bounded: above `maxCluster` embeddings an evenly spaced sample is clustered.
 */
export function speakerCentroids(
  embeddings: Float32Array[],
  bounds: CountBounds,
  options: EmbeddingClusteringOptions = {},
): Float32Array[] {
  const threshold = options.threshold ?? 0.5;
  const maxCluster = options.maxCluster ?? 1500;
  if (embeddings.length === 0) return [];
  const stride = Math.max(1, embeddings.length / maxCluster);
  const sample: Float32Array[] = [];
  for (let i = 0; Math.floor(i) < embeddings.length; i += stride) sample.push(embeddings[Math.floor(i)]!);
  const n = sample.length;
  if (n === 1) return [sample[0]!];
  const merges = averageLinkage(sample);
  let labels = cutTree(merges, n, clustersBelow(merges, n, threshold));
  const minSize = options.minClusterSize ?? Math.min(12, Math.max(1, Math.round(0.1 * n)));
  const sizes = count(labels);
  let large = sizes.map((s, c) => (s >= minSize ? c : -1)).filter((c) => c >= 0);
  if (large.length === 0) large = sizes.map((_, c) => c);
  const k = clampCount(large.length, bounds);
  if (k !== large.length) {
    labels = cutTree(merges, n, Math.min(k, n));
    large = count(labels).map((_, c) => c);
  }
  return large.map((c) => {
    const sum = new Float32Array(sample[0]!.length);
    labels.forEach((l, i) => {
      if (l === c) for (let d = 0; d < sum.length; d++) sum[d]! += sample[i]![d]!;
    });
    return normalise(sum);
  });
}

/**
 * A floor on the speaker count from windows that hold several voices at once: per window, the
 * local speakers kept greedily while each is at least `distance` (cosine) from those kept; the
 * floor is the most voices that at least max(2, 5% of the windows) each hold. One or two odd
 * windows (a voice split in two by the segmentation) do not raise it; in a long single-speaker
 * recording neither do a few dozen.
 */
export function voicesHeardTogether(windows: Float32Array[][], distance: number): number {
  const counts = windows.map((group) => {
    const kept: Float32Array[] = [];
    for (const e of group) if (kept.every((k) => 1 - dot(k, e) >= distance)) kept.push(e);
    return kept.length;
  });
  counts.sort((a, b) => b - a);
  const needed = Math.max(2, Math.ceil(0.05 * windows.length));
  return counts[needed - 1] ?? 0;
}

function count(labels: number[]): number[] {
  const sizes: number[] = [];
  for (const l of labels) sizes[l] = (sizes[l] ?? 0) + 1;
  return Array.from(sizes, (s) => s ?? 0);
}

/**
 * Gives the local speakers of one window distinct centroids, best cosine first (two voices of
 * one window are two people); with more local speakers than centroids the rest take their best.
 */
export function assignWindow(embeddings: (Float32Array | null)[], centroids: Float32Array[]): number[] {
  const out = embeddings.map(() => -1);
  const pairs: { s: number; c: number; score: number }[] = [];
  embeddings.forEach((e, s) => {
    if (e) centroids.forEach((c, ci) => pairs.push({ s, c: ci, score: dot(e, c) }));
  });
  pairs.sort((a, b) => b.score - a.score);
  const used = new Set<number>();
  for (const p of pairs) {
    if (out[p.s] !== -1 || used.has(p.c)) continue;
    out[p.s] = p.c;
    used.add(p.c);
  }
  for (const p of pairs) if (out[p.s] === -1) out[p.s] = p.c;
  return out;
}
