import { clampCount, countBounds, MAX_SPEAKERS } from './count-bounds';

describe('countBounds', () => {
  it('maps each form of the speakers option', () => {
    expect(countBounds(true)).toEqual({ min: 1, max: MAX_SPEAKERS });
    expect(countBounds(3)).toEqual({ min: 3, max: 3 });
    expect(countBounds({ min: 2, max: 4 })).toEqual({ min: 2, max: 4 });
  });

  it('rejects values the API would refuse', () => {
    for (const bad of [0, 21, 2.5, Number.NaN]) expect(() => countBounds(bad)).toThrow(RangeError);
    expect(() => countBounds({ min: 4, max: 2 })).toThrow(/above max/);
    expect(() => countBounds({ min: 0, max: 2 })).toThrow(RangeError);
  });
});

describe('clampCount', () => {
  it('clamps an estimate into the bounds', () => {
    expect(clampCount(5, { min: 1, max: 3 })).toBe(3);
    expect(clampCount(1, { min: 2, max: 3 })).toBe(2);
    expect(clampCount(2, { min: 1, max: 20 })).toBe(2);
  });
});
