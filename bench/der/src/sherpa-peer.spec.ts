import { toResult } from './sherpa-peer';

describe('toResult (the peer turns in Hark result shape)', () => {
  it('cuts overlapping turns into segments that name everyone speaking', () => {
    const result = toResult([
      [0, 2, 0],
      [1.5, 3, 1],
      [4, 5, 0],
    ]);
    expect(result.segments).toEqual([
      { start: 0, end: 1.5, speakers: ['S0'] },
      { start: 1.5, end: 2, speakers: ['S0', 'S1'] },
      { start: 2, end: 3, speakers: ['S1'] },
      { start: 4, end: 5, speakers: ['S0'] },
    ]);
    expect(result.speakerCount).toBe(2);
  });

  it('gives no segments and no speakers for no turns', () => {
    expect(toResult([])).toEqual({ segments: [], speakerCount: 0 });
  });
});
