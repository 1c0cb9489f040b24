import { averageLinkage, clustersBelow, cosineDistance, cutTree } from './agglomerative';

/** Points scattered around `centres` (deterministic jitter). */
function blobs(
  centres: number[][],
  perBlob: number,
  spread: number,
): { vectors: Float32Array[]; truth: number[] } {
  const vectors: Float32Array[] = [];
  const truth: number[] = [];
  let seed = 7;
  const rand = () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 2 * spread;
  for (let i = 0; i < perBlob; i++) {
    centres.forEach((c, k) => {
      vectors.push(Float32Array.from(c, (x) => x + rand()));
      truth.push(k);
    });
  }
  return { vectors, truth };
}

describe('cosineDistance', () => {
  it('is 0 for parallel, 1 for orthogonal, 2 for opposite and 1 for a zero vector', () => {
    const v = (...x: number[]) => Float32Array.from(x);
    expect(cosineDistance(v(1, 2), v(2, 4))).toBeCloseTo(0);
    expect(cosineDistance(v(1, 0), v(0, 3))).toBeCloseTo(1);
    expect(cosineDistance(v(1, 1), v(-1, -1))).toBeCloseTo(2);
    expect(cosineDistance(v(0, 0), v(1, 1))).toBe(1);
  });
});

describe('averageLinkage', () => {
  const { vectors, truth } = blobs(
    [
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
    ],
    10,
    0.15,
  );
  const merges = averageLinkage(vectors);

  it('returns n - 1 merges sorted by distance', () => {
    expect(merges).toHaveLength(vectors.length - 1);
    for (let i = 1; i < merges.length; i++)
      expect(merges[i]!.distance).toBeGreaterThanOrEqual(merges[i - 1]!.distance);
  });

  it('recovers the three groups when cut at three', () => {
    const labels = cutTree(merges, vectors.length, 3);
    const byTruth = new Map<number, Set<number>>();
    labels.forEach((l, i) => byTruth.set(truth[i]!, (byTruth.get(truth[i]!) ?? new Set()).add(l)));
    for (const set of byTruth.values()) expect(set.size).toBe(1);
    expect(new Set(labels).size).toBe(3);
  });

  it('numbers labels by first appearance and counts clusters under a threshold', () => {
    expect(cutTree(merges, vectors.length, 3).slice(0, 3)).toEqual([0, 1, 2]);
    expect(clustersBelow(merges, vectors.length, 0.5)).toBe(3);
    expect(clustersBelow(merges, vectors.length, 2)).toBe(1);
    expect(new Set(cutTree(merges, vectors.length, 1)).size).toBe(1);
  });

  it('matches a brute-force average linkage on a small set', () => {
    const small = blobs(
      [
        [1, 0],
        [0.7, 0.7],
        [0, 1],
      ],
      3,
      0.3,
    ).vectors;
    const naive = naiveAverageLinkage(small).map((d) => d.toFixed(6));
    expect(averageLinkage(small).map((m) => m.distance.toFixed(6))).toEqual(naive);
  });
});

function naiveAverageLinkage(vectors: Float32Array[]): number[] {
  let clusters = vectors.map((_, i) => [i]);
  const heights: number[] = [];
  while (clusters.length > 1) {
    let best = [0, 1, Infinity] as [number, number, number];
    for (let a = 0; a < clusters.length; a++) {
      for (let b = a + 1; b < clusters.length; b++) {
        let sum = 0;
        for (const i of clusters[a]!)
          for (const j of clusters[b]!) sum += cosineDistance(vectors[i]!, vectors[j]!);
        const d = sum / (clusters[a]!.length * clusters[b]!.length);
        if (d < best[2]) best = [a, b, d];
      }
    }
    heights.push(best[2]);
    const merged = [...clusters[best[0]]!, ...clusters[best[1]]!];
    clusters = clusters.filter((_, i) => i !== best[0] && i !== best[1]).concat([merged]);
  }
  return heights.sort((a, b) => a - b);
}
