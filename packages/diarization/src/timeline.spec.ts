import { absorbShortRuns, buildTimeline, relabel, type Segment, speakerName } from './timeline';
import { speechWindows } from './windows';

const seg = (start: number, end: number, ...speakers: number[]): Segment<number> => ({
  start,
  end,
  speakers,
});
const rounded = (segments: Segment<number | string>[]) =>
  segments.map((s) => [Math.round(s.start * 100) / 100, Math.round(s.end * 100) / 100, s.speakers.join('+')]);

describe('buildTimeline', () => {
  it('cuts a region where the window labels change, halfway between window centres', () => {
    const regions = [{ start: 0, end: 6 }];
    const windows = speechWindows(regions); // starts 0, 0.75, ..., 4.5
    const labels = windows.map((w) => (w.start < 2.5 ? 0 : 1)); // windows starting 0..2.25 -> 0
    const out = buildTimeline(regions, windows, labels);
    expect(out).toHaveLength(2);
    expect(out[0]!.speakers).toEqual([0]);
    // Last window of speaker 0 is centred at 3.0, first of speaker 1 at 3.75.
    expect(out[0]!.end).toBeGreaterThan(3);
    expect(out[0]!.end).toBeLessThan(3.75);
    expect(out[1]).toMatchObject({ end: 6, speakers: [1] });
  });

  it('absorbs a one-window flip inside a long turn', () => {
    const regions = [{ start: 0, end: 9 }];
    const windows = speechWindows(regions, { length: 1.5, hop: 1.5 });
    const labels = windows.map((_, i) => (i === 3 ? 1 : 0));
    expect(rounded(buildTimeline(regions, windows, labels, { minTurn: 2 }))).toEqual([[0, 9, '0']]);
  });

  it('keeps separate regions separate', () => {
    const regions = [
      { start: 0, end: 1 },
      { start: 3, end: 4 },
    ];
    const out = buildTimeline(regions, speechWindows(regions), [0, 1]);
    expect(rounded(out)).toEqual([
      [0, 1, '0'],
      [3, 4, '1'],
    ]);
  });
});

describe('absorbShortRuns', () => {
  it('gives a short run to its longer neighbour and joins equal neighbours', () => {
    const out = absorbShortRuns([seg(0, 3, 0), seg(3, 3.2, 1), seg(3.2, 4, 2)], 0.5);
    expect(rounded(out)).toEqual([
      [0, 3.2, '0'],
      [3.2, 4, '2'],
    ]);
    expect(rounded(absorbShortRuns([seg(0, 3, 0), seg(3, 3.2, 1), seg(3.2, 5, 0)], 0.5))).toEqual([
      [0, 5, '0'],
    ]);
  });

  it('leaves a lone short run alone', () => {
    expect(absorbShortRuns([seg(0, 0.2, 4)], 0.5)).toEqual([seg(0, 0.2, 4)]);
  });
});

describe('relabel', () => {
  it('names speakers A, B, ... by first appearance and sorts overlap names', () => {
    const out = relabel([seg(5, 6, 3), seg(0, 1, 7), seg(2, 3, 3, 7), seg(3, 4, 9)]);
    expect(out).toEqual([
      { start: 0, end: 1, speakers: ['A'] },
      { start: 2, end: 3, speakers: ['A', 'B'] },
      { start: 3, end: 4, speakers: ['C'] },
      { start: 5, end: 6, speakers: ['B'] },
    ]);
  });

  it('continues past Z', () => {
    expect([0, 25, 26, 27, 51, 52].map(speakerName)).toEqual(['A', 'Z', 'AA', 'AB', 'AZ', 'BA']);
  });
});
