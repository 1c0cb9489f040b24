import { deltaBic, Gaussian, GaussianStats } from './gaussian';

/** Frames from N(mean, diag(scale^2)) with a deterministic Box-Muller generator. */
function frames(count: number, mean: number[], scale: number[], seed: number): GaussianStats {
  let s = seed;
  const uniform = () => ((s = (s * 16807) % 2147483647) + 1) / 2147483648;
  const stats = new GaussianStats(mean.length);
  for (let i = 0; i < count; i++) {
    stats.add(
      mean.map(
        (m, d) => m + scale[d]! * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform()),
      ),
    );
  }
  return stats;
}

describe('GaussianStats', () => {
  it('estimates the log-determinant of the covariance', () => {
    const g = frames(20000, [0, 0], [2, 0.5], 1);
    expect(g.logDet()).toBeCloseTo(Math.log(4 * 0.25), 1);
  });

  it('merges by adding statistics', () => {
    const a = frames(100, [0, 0], [1, 1], 2);
    const b = frames(50, [1, 1], [1, 1], 3);
    const m = a.merged(b);
    expect(m.count).toBe(150);
    expect(m.sum[0]).toBeCloseTo(a.sum[0]! + b.sum[0]!);
  });
});

describe('deltaBic', () => {
  it('prefers one model for frames of one distribution and two for different ones', () => {
    const a = frames(2000, [0, 0, 0], [1, 1, 1], 4);
    const same = frames(2000, [0, 0, 0], [1, 1, 1], 5);
    const other = frames(2000, [1.5, -1, 0], [1, 2, 1], 6);
    expect(deltaBic(a, same, 1)).toBeLessThan(0);
    expect(deltaBic(a, other, 1)).toBeGreaterThan(0);
  });
});

describe('Gaussian', () => {
  it('matches the closed-form density of a diagonal Gaussian', () => {
    const stats = frames(50000, [1, -2], [1, 3], 7);
    const g = new Gaussian(stats, 0);
    const x = [2, 1];
    const expected =
      -0.5 * (Math.log(2 * Math.PI) * 2 + Math.log(1 * 9) + (2 - 1) ** 2 / 1 + (1 + 2) ** 2 / 9);
    expect(g.logLikelihood(x)).toBeCloseTo(expected, 1);
  });
});
