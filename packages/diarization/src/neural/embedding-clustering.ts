import { averageLinkage, clustersBelow, cutTree } from '../clustering/agglomerative';
import type { CountBounds } from '../clustering/count-bounds';

export interface EmbeddingClusteringOptions {
  /** Average-linkage cosine distance under which clusters merge. Default 0.5 (see README). */
  threshold?: number;
  /** At most this many embeddings enter the O(n^2) clustering; the rest are assigned to centroids. Default 1500. */
  maxCluster?: number;
  /** Clusters smaller than min(12, 10% of the clustered embeddings) do not count as speakers (pyannote's rule). */
  minClusterSize?: number;
  /**
   * A small cluster or an untrained local speaker farther than this (average-linkage cosine
   * distance) from every speaker found is a speaker of its own (`fitCount`). Default 0.6, a
   * margin of 0.1 over the threshold for the noise of short embeddings; 1 or more disables.
   */
  newVoiceDistance?: number;
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
 * nearest centroid later); the count is then moved into `bounds` by `fitCount`, which may also
 * take a speaker from `candidates` (embeddings that did not train the clustering: local speakers
 * with little clean speech). Memory is bounded: above `maxCluster` embeddings an evenly spaced
 * sample is clustered, and as many candidates at most are considered.
 */
export function speakerCentroids(
  embeddings: Float32Array[],
  bounds: CountBounds,
  options: EmbeddingClusteringOptions = {},
  candidates: Float32Array[] = [],
): Float32Array[] {
  const threshold = options.threshold ?? 0.5;
  const maxCluster = options.maxCluster ?? 1500;
  if (embeddings.length === 0) return [];
  const sample = evenly(embeddings, maxCluster);
  const n = sample.length;
  const merges = averageLinkage(sample);
  const labels = cutTree(merges, n, clustersBelow(merges, n, threshold));
  const minSize = options.minClusterSize ?? Math.min(12, Math.max(1, Math.round(0.1 * n)));
  const members: Float32Array[][] = [];
  labels.forEach((l, i) => (members[l] ??= []).push(sample[i]!));
  let groups = members.filter((m) => m.length >= minSize);
  let small = members.filter((m) => m.length < minSize);
  if (groups.length === 0) [groups, small] = [members, []];
  const pool = [...small, ...evenly(candidates, maxCluster).map((c) => [c])];
  return fitCount(groups, pool, bounds, options.newVoiceDistance ?? 0.6).map(centroid);
}

/** At most `max` items, evenly spaced. */
function evenly<T>(items: T[], max: number): T[] {
  if (items.length <= max) return items;
  const stride = items.length / max;
  return Array.from({ length: max }, (_, i) => items[Math.floor(i * stride)]!);
}

/** L2-normalised mean of unit vectors. */
function centroid(group: Float32Array[]): Float32Array {
  const sum = new Float32Array(group[0]!.length);
  for (const v of group) for (let d = 0; d < sum.length; d++) sum[d]! += v[d]!;
  return normalise(sum);
}

/** Average-linkage distance: the mean cosine distance between the members of two groups. */
export function groupDistance(a: Float32Array[], b: Float32Array[]): number {
  let s = 0;
  for (const x of a) for (const y of b) s += 1 - dot(x, y);
  return s / (a.length * b.length);
}

/**
 * Moves the number of speaker groups into `bounds` one step at a time, each step on the
 * clustering's own scale (average-linkage cosine distance), so a count the caller asks for costs
 * as little as the audio allows:
 * - first, a group of `pool` (clusters too small to count, local speakers that did not train the
 *   clustering) farther than `newVoice` from every group is a voice of its own: a person who said
 *   too little to train the clustering, but sounds like nobody found (most distant first, while
 *   under `bounds.max`);
 * - too few: the most separated new speaker is added. Either one group is split along its own
 *   top merge (scored by that merge's distance), or a group of `pool` (clusters too small to
 *   count, local speakers that did not train the clustering) becomes a speaker of its own (scored
 *   by its distance to the nearest group). A quiet person who says little is then found before a
 *   talkative one is cut in two, and the speakers already found are never merged to make room;
 * - too many: the two nearest groups merge.
 */
export function fitCount(
  groups: Float32Array[][],
  pool: Float32Array[][],
  bounds: CountBounds,
  newVoice = Infinity,
): Float32Array[][] {
  groups = [...groups];
  const left = [...pool];
  const splits = new Map<Float32Array[], { halves: Float32Array[][]; distance: number }>();
  const splitOf = (g: Float32Array[]) => {
    let s = splits.get(g);
    if (!s) {
      const merges = averageLinkage(g);
      const halves: Float32Array[][] = [[], []];
      cutTree(merges, g.length, 2).forEach((l, i) => halves[l]!.push(g[i]!));
      s = { halves, distance: merges[merges.length - 1]!.distance };
      splits.set(g, s);
    }
    return s;
  };
  // Distances between groups (a pool group is one too), each pair computed once.
  const known = new Map<Float32Array[], Map<Float32Array[], number>>();
  const between = (a: Float32Array[], b: Float32Array[]) => {
    let row = known.get(a);
    if (!row) known.set(a, (row = new Map()));
    let d = row.get(b);
    if (d === undefined) row.set(b, (d = groupDistance(a, b)));
    return d;
  };
  const nearest = (p: Float32Array[]) => Math.min(...groups.map((g) => between(p, g)));
  /** The pool group farthest from every group, if any is farther than `than`. */
  const farthest = (than: number) => {
    let best: { p: Float32Array[]; distance: number } | undefined;
    for (const p of left) {
      const distance = nearest(p);
      if (distance > (best?.distance ?? than)) best = { p, distance };
    }
    return best;
  };
  const promote = (p: Float32Array[]) => groups.push(...left.splice(left.indexOf(p), 1));
  while (groups.length < bounds.max) {
    const far = farthest(newVoice);
    if (!far) break;
    promote(far.p);
  }
  while (groups.length < bounds.min) {
    let best: { distance: number; apply: () => void } | undefined;
    for (const g of groups) {
      if (g.length < 2) continue;
      const s = splitOf(g);
      if (!best || s.distance > best.distance)
        best = { distance: s.distance, apply: () => groups.splice(groups.indexOf(g), 1, ...s.halves) };
    }
    const far = farthest(-Infinity);
    if (far && (!best || far.distance > best.distance))
      best = { distance: far.distance, apply: () => promote(far.p) };
    if (!best) break;
    best.apply();
  }
  while (groups.length > Math.max(1, bounds.max)) {
    let pair = { i: 0, j: 1, distance: Infinity };
    for (let i = 0; i < groups.length; i++)
      for (let j = i + 1; j < groups.length; j++) {
        const distance = between(groups[i]!, groups[j]!);
        if (distance < pair.distance) pair = { i, j, distance };
      }
    groups[pair.i] = [...groups[pair.i]!, ...groups[pair.j]!];
    groups.splice(pair.j, 1);
  }
  return groups;
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
