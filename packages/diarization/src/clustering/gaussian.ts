/** Sufficient statistics of a full-covariance Gaussian over `dims`-dimensional frames. */
export class GaussianStats {
  count = 0;
  readonly sum: Float64Array;
  readonly scatter: Float64Array; // sum of outer products, row-major dims x dims

  constructor(readonly dims: number) {
    this.sum = new Float64Array(dims);
    this.scatter = new Float64Array(dims * dims);
  }

  add(frame: ArrayLike<number>, offset = 0): void {
    const { dims, sum, scatter } = this;
    this.count++;
    for (let a = 0; a < dims; a++) {
      const x = frame[offset + a]!;
      sum[a] = sum[a]! + x;
      // Upper triangle only; logDet mirrors it.
      for (let b = a; b < dims; b++) scatter[a * dims + b] = scatter[a * dims + b]! + x * frame[offset + b]!;
    }
  }

  merged(other: GaussianStats): GaussianStats {
    const out = new GaussianStats(this.dims);
    out.count = this.count + other.count;
    for (let i = 0; i < this.sum.length; i++) out.sum[i] = this.sum[i]! + other.sum[i]!;
    for (let i = 0; i < this.scatter.length; i++) out.scatter[i] = this.scatter[i]! + other.scatter[i]!;
    return out;
  }

  /** log |covariance| (maximum-likelihood), through a Cholesky factorisation. */
  logDet(): number {
    const { dims, count, sum, scatter } = this;
    if (count === 0) return 0;
    const c = new Float64Array(dims * dims);
    for (let a = 0; a < dims; a++) {
      for (let b = a; b < dims; b++) {
        const v = scatter[a * dims + b]! / count - (sum[a]! / count) * (sum[b]! / count);
        c[a * dims + b] = v;
        c[b * dims + a] = v;
      }
      // A small ridge keeps tiny clusters (fewer frames than parameters) positive definite.
      c[a * dims + a] = c[a * dims + a]! + 1e-6;
    }
    let logDet = 0;
    for (let j = 0; j < dims; j++) {
      let d = c[j * dims + j]!;
      for (let k = 0; k < j; k++) d -= c[j * dims + k]! ** 2;
      const l = Math.sqrt(Math.max(d, 1e-12));
      c[j * dims + j] = l;
      logDet += 2 * Math.log(l);
      for (let i = j + 1; i < dims; i++) {
        let u = c[i * dims + j]!;
        for (let k = 0; k < j; k++) u -= c[i * dims + k]! * c[j * dims + k]!;
        c[i * dims + j] = u / l;
      }
    }
    return logDet;
  }
}

/**
 * Delta-BIC of modelling two frame sets by one Gaussian instead of two: negative means the
 * merged model is preferred (same speaker). `lambda` scales the complexity penalty; frames
 * 10 ms apart are strongly correlated, so the textbook lambda = 1 over-splits.
 */
export function deltaBic(a: GaussianStats, b: GaussianStats, lambda: number, logDets?: [number, number]): number {
  const m = a.merged(b);
  const d = a.dims;
  const [la, lb] = logDets ?? [a.logDet(), b.logDet()];
  const penalty = 0.5 * (d + (d * (d + 1)) / 2) * Math.log(m.count);
  return 0.5 * (m.count * m.logDet() - a.count * la - b.count * lb) - lambda * penalty;
}
