import { isIdOf, newId, newRequestId } from './ids';

describe('ids', () => {
  it('have their prefix and 120 bits (request ids 96) of base64url', () => {
    expect(newId('tr')).toMatch(/^tr_[A-Za-z0-9_-]{20}$/);
    expect(newRequestId()).toMatch(/^req_[A-Za-z0-9_-]{16}$/);
  });

  it('are unique across many refills of the random pool', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 50_000; i++) ids.add(i % 2 ? newId('up') : newRequestId());
    expect(ids.size).toBe(50_000);
  });

  it('are not biased towards any character (pool bytes are never reused)', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 20_000; i++)
      for (const c of newId('key').slice(4)) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(64);
    const expected = (20_000 * 20) / 64;
    for (const n of counts.values()) expect(Math.abs(n - expected) / expected).toBeLessThan(0.1);
  });

  it('isIdOf tells the ids Hark makes from other names', () => {
    expect(isIdOf('up', newId('up'))).toBe(true);
    for (const other of [
      newId('tr'),
      'up_short',
      `${newId('up')}x`,
      `x${newId('up')}`,
      'up_abcdefghij.klmnopqrs',
      'k1',
    ])
      expect([other, isIdOf('up', other)]).toEqual([other, false]);
  });
});
