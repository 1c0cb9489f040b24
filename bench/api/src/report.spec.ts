import { formatReport, type Measured } from './report';

describe('formatReport', () => {
  const m = (kind: 'hark' | 'bare', rps: number, p99Ms: number): Measured => ({
    kind,
    result: { requests: rps * 10, seconds: 10, rps, p50Ms: 1, p90Ms: 2, p99Ms, maxMs: 60, errors: 0 },
    notes: [],
    loadBefore: 1,
  });

  it('prints the ratio and each target with its verdict', () => {
    const text = formatReport(m('hark', 3000, 40), m('bare', 10000, 5));
    expect(text).toContain('ratio hark/bare req/s: 0.300   (target >= 0.3: met)');
    expect(text).toContain('hark p99: 40.00 ms   (target < 50 ms: met)');
  });

  it('marks missed targets', () => {
    const text = formatReport(m('hark', 1000, 80), m('bare', 10000, 5));
    expect(text).toContain('(target >= 0.3: MISSED)');
    expect(text).toContain('(target < 50 ms: MISSED)');
  });
});
