import { percentile, summarize } from './stats';

describe('percentile', () => {
  it('nearest rank over unsorted samples', () => {
    const xs = Array.from({ length: 200 }, (_, i) => 200 - i); // 200..1
    expect(percentile(xs, 50)).toBe(100);
    expect(percentile(xs, 99)).toBe(198);
    expect(percentile(xs, 100)).toBe(200);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });

  it('summarize gives n, p50, p99, max', () => {
    expect(summarize([3, 1, 2])).toEqual({ n: 3, p50: 2, p99: 3, max: 3 });
  });
});
