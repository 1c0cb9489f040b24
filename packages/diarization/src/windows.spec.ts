import { speechWindows } from './windows';

describe('speechWindows', () => {
  it('keeps a short region as one window', () => {
    expect(speechWindows([{ start: 1, end: 2 }])).toEqual([{ start: 1, end: 2 }]);
  });

  it('steps 1.5 s windows by 0.75 s and aligns the last one to the region end', () => {
    const w = speechWindows([{ start: 0, end: 3.2 }]);
    const rounded = w.map((x) => [x.start, x.end].map((t) => Math.round(t * 100) / 100));
    expect(rounded).toEqual([
      [0, 1.5],
      [0.75, 2.25],
      [1.5, 3],
      [1.7, 3.2],
    ]);
  });

  it('adds no duplicate when the windows end exactly on the region end', () => {
    const w = speechWindows([{ start: 7.11, end: 10.11 }]);
    expect(w).toHaveLength(3);
    expect(w[2]!.end).toBeCloseTo(10.11);
  });

  it('honours custom lengths and keeps regions apart', () => {
    const w = speechWindows(
      [
        { start: 0, end: 2 },
        { start: 5, end: 6 },
      ],
      { length: 1, hop: 1 },
    );
    expect(w).toEqual([
      { start: 0, end: 1 },
      { start: 1, end: 2 },
      { start: 5, end: 6 },
    ]);
  });
});
