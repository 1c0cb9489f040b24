/**
 * Maximum-weight one-to-one assignment between rows and columns of `weights` (rows x cols,
 * any shape) with the O(n^3) Hungarian algorithm on the square, zero-padded cost matrix.
 * Returns, for each row, its column or -1 when the row is left unassigned.
 */
export function maxWeightAssignment(weights: number[][]): number[] {
  const rows = weights.length;
  const cols = Math.max(0, ...weights.map((r) => r.length));
  const n = Math.max(rows, cols);
  if (n === 0) return [];
  let max = 0;
  for (const row of weights) for (const w of row) max = Math.max(max, w);
  // Minimise (max - w): costs stay non-negative, padding cells cost `max` (weight 0).
  const cost = (i: number, j: number): number => max - (weights[i]?.[j] ?? 0);

  // 1-based potentials and matching, as in the classic formulation (e-maxx).
  const u = new Float64Array(n + 1);
  const v = new Float64Array(n + 1);
  const match = new Int32Array(n + 1); // match[column] = row
  const way = new Int32Array(n + 1);
  for (let i = 1; i <= n; i++) {
    match[0] = i;
    let j0 = 0;
    const minv = new Float64Array(n + 1).fill(Infinity);
    const used = new Uint8Array(n + 1);
    do {
      used[j0] = 1;
      const i0 = match[j0]!;
      let delta = Infinity;
      let j1 = 0;
      for (let j = 1; j <= n; j++) {
        if (used[j]) continue;
        const cur = cost(i0 - 1, j - 1) - u[i0]! - v[j]!;
        if (cur < minv[j]!) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j]! < delta) {
          delta = minv[j]!;
          j1 = j;
        }
      }
      for (let j = 0; j <= n; j++) {
        if (used[j]) {
          const row = match[j]!;
          u[row] = u[row]! + delta;
          v[j] = v[j]! - delta;
        } else {
          minv[j] = minv[j]! - delta;
        }
      }
      j0 = j1;
    } while (match[j0] !== 0);
    do {
      const j1 = way[j0]!;
      match[j0] = match[j1]!;
      j0 = j1;
    } while (j0 !== 0);
  }
  const out = new Array<number>(rows).fill(-1);
  for (let j = 1; j <= n; j++) {
    const i = match[j]! - 1;
    if (i < rows && j - 1 < cols && (weights[i]?.[j - 1] ?? 0) > 0) out[i] = j - 1;
  }
  return out;
}
