import { formatReport, median, type Measured, type Round } from './report';

describe('formatReport', () => {
  const m = (kind: 'hark' | 'bare', rps: number, p99Ms: number, errors = 0): Measured => ({
    kind,
    result: { requests: rps * 10, seconds: 10, rps, p50Ms: 1, p90Ms: 2, p99Ms, maxMs: 60, errors },
    notes: [],
    loadBefore: 1,
    serverCpuSeconds: (rps * 10) / 1e4, // 100 µs per request
  });
  const round = (hark: number, bare: number, p99: number): Round => ({
    hark: m('hark', hark, p99),
    bare: m('bare', bare, 5),
  });

  it('judges the median of the per-round ratios and of hark p99s', () => {
    // Ratios 0.2, 0.3, 0.5: median 0.3. p99s 90, 40, 45: median 45.
    const text = formatReport([round(2000, 10000, 90), round(3000, 10000, 40), round(5000, 10000, 45)]);
    expect(text).toContain('per-round ratio hark/bare req/s: 0.200 0.300 0.500');
    expect(text).toContain('ratio hark/bare req/s (median of rounds): 0.300   (target >= 0.3: met)');
    expect(text).toContain('hark p99 (median of rounds): 45.00 ms   (target < 50 ms: met)');
    expect(text).toContain('server CPU per request: hark 100 µs, bare 100 µs');
    expect(text).not.toContain('WARNING');
  });

  it('marks missed targets and flags errors', () => {
    const bad: Round = { hark: m('hark', 1000, 80, 3), bare: m('bare', 10000, 5) };
    const text = formatReport([bad]);
    expect(text).toContain('(target >= 0.3: MISSED)');
    expect(text).toContain('(target < 50 ms: MISSED)');
    expect(text).toContain('WARNING');
  });

  it('median', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(median([])).toBe(0);
  });
});
