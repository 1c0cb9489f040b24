/** One merge of a dendrogram: clusters `a` and `b` joined at `distance` (ids as in scipy). */
export interface Merge {
  a: number;
  b: number;
  distance: number;
}

/** 1 - cosine similarity of two vectors; 1 when either is all zeros. */
export function cosineDistance(x: Float32Array, y: Float32Array): number {
  let dot = 0;
  let nx = 0;
  let ny = 0;
  for (let i = 0; i < x.length; i++) {
    dot += x[i]! * y[i]!;
    nx += x[i]! * x[i]!;
    ny += y[i]! * y[i]!;
  }
  return nx === 0 || ny === 0 ? 1 : 1 - dot / Math.sqrt(nx * ny);
}

/**
 * Average-linkage agglomerative clustering on cosine distance with the nearest-neighbour chain
 * algorithm: O(n^2) time and memory instead of the naive O(n^3), which matters for hour-long
 * audio. Merges come back sorted by distance; leaf ids are 0..n-1 and merge i creates id n+i.
 */
export function averageLinkage(
  vectors: Float32Array[],
  distance: (x: Float32Array, y: Float32Array) => number = cosineDistance,
): Merge[] {
  const n = vectors.length;
  const dist = new Float32Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const d = distance(vectors[i]!, vectors[j]!);
      dist[i * n + j] = d;
      dist[j * n + i] = d;
    }
  }
  const size = new Float64Array(n).fill(1);
  const active = new Uint8Array(n).fill(1);
  const raw: { a: number; b: number; distance: number }[] = [];
  const chain: number[] = [];
  for (let remaining = n; remaining > 1; ) {
    if (chain.length === 0) chain.push(active.indexOf(1));
    const top = chain[chain.length - 1]!;
    const prev = chain.length > 1 ? chain[chain.length - 2]! : -1;
    // The nearest active neighbour of `top`; ties prefer the previous chain element so the
    // chain always terminates in a reciprocal pair.
    let best = prev;
    let bestD = prev >= 0 ? dist[top * n + prev]! : Infinity;
    for (let j = 0; j < n; j++) {
      if (!active[j] || j === top) continue;
      const d = dist[top * n + j]!;
      if (d < bestD) {
        bestD = d;
        best = j;
      }
    }
    if (best !== prev) {
      chain.push(best);
      continue;
    }
    chain.length -= 2;
    // Merge `best` into `top` (slot reuse); Lance-Williams update for average linkage.
    raw.push({ a: top, b: best, distance: bestD });
    const [sa, sb] = [size[top]!, size[best]!];
    for (let j = 0; j < n; j++) {
      if (!active[j] || j === top || j === best) continue;
      const d = (sa * dist[top * n + j]! + sb * dist[best * n + j]!) / (sa + sb);
      dist[top * n + j] = d;
      dist[j * n + top] = d;
    }
    size[top] = sa + sb;
    active[best] = 0;
    remaining--;
  }
  return relabelMerges(raw, n);
}

/** Sorts merges by distance and renames slots to scipy-style cluster ids. */
function relabelMerges(raw: Merge[], n: number): Merge[] {
  const order = raw.map((_, i) => i).sort((i, j) => raw[i]!.distance - raw[j]!.distance);
  const parent = Array.from({ length: 2 * n }, (_, i) => i);
  const find = (x: number): number => {
    while (parent[x] !== x) x = parent[x] = parent[parent[x]!]!;
    return x;
  };
  return order.map((i, k) => {
    const { a, b, distance } = raw[i]!;
    const [ra, rb] = [find(a), find(b)];
    parent[ra] = n + k;
    parent[rb] = n + k;
    return { a: Math.min(ra, rb), b: Math.max(ra, rb), distance };
  });
}

/** Flat labels 0..k-1 (in order of first leaf) after applying the first n - k merges. */
export function cutTree(merges: Merge[], n: number, k: number): number[] {
  const parent = Array.from({ length: 2 * n }, (_, i) => i);
  const find = (x: number): number => {
    while (parent[x] !== x) x = parent[x] = parent[parent[x]!]!;
    return x;
  };
  const applied = Math.max(0, Math.min(merges.length, n - Math.max(k, 1)));
  for (let i = 0; i < applied; i++) {
    const m = merges[i]!;
    parent[find(m.a)] = n + i;
    parent[find(m.b)] = n + i;
  }
  const ids = new Map<number, number>();
  return Array.from({ length: n }, (_, i) => {
    const root = find(i);
    if (!ids.has(root)) ids.set(root, ids.size);
    return ids.get(root)!;
  });
}

/** Number of clusters left when every merge closer than `threshold` is applied. */
export function clustersBelow(merges: Merge[], n: number, threshold: number): number {
  return n - merges.filter((m) => m.distance < threshold).length;
}
