import type { Turn } from './rttm';
import { describeErrors, edgeErrors, speechOf } from './word-onsets';

const t = (speaker: string, start: number, end: number): Turn => ({ file: 'f', start, end, speaker });
const w = (start: number, end: number) => ({ start, end });

describe('speechOf', () => {
  it('merges overlapping and touching turns of anyone into spans of speech', () => {
    expect(speechOf([t('b', 3, 5), t('a', 0, 2), t('c', 2, 2.5), t('a', 4, 6)])).toEqual([
      { start: 0, end: 2.5 },
      { start: 3, end: 6 },
    ]);
  });
});

describe('edgeErrors', () => {
  // Speech 2-4 and 6-8 (and 8.2-9, too close to 8 to make 8 an end), scored 0-12.
  const ref = [t('a', 2, 4), t('b', 6, 8), t('a', 8.2, 9)];

  it('times each onset by the first word after it and each end by the last word before it', () => {
    const words = [w(1.7, 2.5), w(2.6, 3.9), w(6.1, 6.5), w(6.6, 9.2)];
    const e = edgeErrors(words, ref, [0, 12]);
    expect(e.onsets).toBe(2);
    expect(e.onsetErrors.map((x) => +x.toFixed(2))).toEqual([-0.3, 0.1]);
    expect(e.ends).toBe(2);
    expect(e.endErrors.map((x) => +x.toFixed(2))).toEqual([-0.1, 0.2]);
  });

  it('skips onsets the transcript was not silent before, words out of reach, and the region edges', () => {
    // A word runs from 1.0 to 1.9: not silent for 0.5 s before the 2 s onset. The 6 s onset's
    // first word comes 2 s late: out of reach.
    const e = edgeErrors([w(1.0, 1.9), w(2.0, 3.9), w(8.0, 9.0)], ref, [0, 12]);
    expect(e.onsets).toBe(0);
    // Scored from 1.8 s: the 2 s onset is too near the region's start to know it followed silence.
    expect(edgeErrors([w(2.1, 3.9)], ref, [1.8, 12]).onsets).toBe(0);
    expect(edgeErrors([w(2.1, 3.9)], ref, [1.5, 12]).onsets).toBe(1);
  });
});

describe('describeErrors', () => {
  it('gives the median, the mean absolute error and the shares early and late by over 0.2 s', () => {
    expect(describeErrors([-0.6, -0.1, 0, 0.3])).toBe(
      'median -0.05 s, mean |error| 0.25 s, 25% early by over 0.2 s, 25% late by over 0.2 s',
    );
    expect(describeErrors([])).toBe('none');
  });
});
