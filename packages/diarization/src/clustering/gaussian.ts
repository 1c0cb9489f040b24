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

  /** Maximum-likelihood covariance, with a small ridge that keeps tiny clusters (fewer frames
   * than parameters) positive definite. */
  covariance(ridge = 1e-6): Float64Array {
    const { dims, count, sum, scatter } = this;
    const c = new Float64Array(dims * dims);
    for (let a = 0; a < dims; a++) {
      for (let b = a; b < dims; b++) {
        const v = scatter[a * dims + b]! / count - (sum[a]! / count) * (sum[b]! / count);
        c[a * dims + b] = v;
        c[b * dims + a] = v;
      }
      c[a * dims + a] = c[a * dims + a]! + ridge;
    }
    return c;
  }

  /** log |covariance|. */
  logDet(): number {
    return this.count === 0 ? 0 : cholesky(this.covariance(), this.dims).logDet;
  }
}

/** A full-covariance Gaussian ready to score frames. */
export class Gaussian {
  private readonly mean: Float64Array;
  private readonly lower: Float64Array;
  private readonly constant: number;
  private readonly scratch: Float64Array;

  constructor(stats: GaussianStats, ridge = 1e-3) {
    this.mean = stats.sum.map((x) => x / Math.max(stats.count, 1));
    const { lower, logDet } = cholesky(stats.covariance(ridge), stats.dims);
    this.lower = lower;
    this.constant = -0.5 * (logDet + stats.dims * Math.log(2 * Math.PI));
    this.scratch = new Float64Array(stats.dims);
  }

  /** Log density of the frame at data[offset .. offset + dims). */
  logLikelihood(data: ArrayLike<number>, offset = 0): number {
    const { mean, lower, scratch: y } = this;
    const d = mean.length;
    let q = 0;
    // Solve L y = x - mean; the Mahalanobis term is |y|^2.
    for (let i = 0; i < d; i++) {
      let u = data[offset + i]! - mean[i]!;
      for (let k = 0; k < i; k++) u -= lower[i * d + k]! * y[k]!;
      y[i] = u / lower[i * d + i]!;
      q += y[i]! * y[i]!;
    }
    return this.constant - 0.5 * q;
  }
}

/** Lower-triangular L with L L^T = matrix, and log |matrix|. */
function cholesky(matrix: Float64Array, n: number): { lower: Float64Array; logDet: number } {
  const l = new Float64Array(n * n);
  let logDet = 0;
  for (let j = 0; j < n; j++) {
    let d = matrix[j * n + j]!;
    for (let k = 0; k < j; k++) d -= l[j * n + k]! ** 2;
    const diag = Math.sqrt(Math.max(d, 1e-12));
    l[j * n + j] = diag;
    logDet += 2 * Math.log(diag);
    for (let i = j + 1; i < n; i++) {
      let u = matrix[i * n + j]!;
      for (let k = 0; k < j; k++) u -= l[i * n + k]! * l[j * n + k]!;
      l[i * n + j] = u / diag;
    }
  }
  return { lower: l, logDet };
}

/**
 * Delta-BIC of modelling two frame sets by one Gaussian instead of two: negative means the
 * merged model is preferred (same speaker). `lambda` scales the complexity penalty; frames
 * 10 ms apart are strongly correlated, so the textbook lambda = 1 over-splits.
 */
export function deltaBic(
  a: GaussianStats,
  b: GaussianStats,
  lambda: number,
  logDets?: [number, number],
): number {
  const m = a.merged(b);
  const d = a.dims;
  const [la, lb] = logDets ?? [a.logDet(), b.logDet()];
  const penalty = 0.5 * (d + (d * (d + 1)) / 2) * Math.log(m.count);
  return 0.5 * (m.count * m.logDet() - a.count * la - b.count * lb) - lambda * penalty;
}
