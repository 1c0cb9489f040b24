import { corpusDer, fileDer } from './der';
import { maxWeightAssignment } from './hungarian';
import { parseRttm, type Turn } from './rttm';

const t = (speaker: string, start: number, end: number, file = 'f'): Turn => ({ file, start, end, speaker });
const noCollar = { collar: 0 };

describe('fileDer', () => {
  it('is 0 for a perfect system whatever its labels are called', () => {
    const r = fileDer([t('alice', 0, 5), t('bob', 5, 10)], [t('B', 0, 5), t('A', 5, 10)], noCollar);
    expect(r).toMatchObject({ total: 10, missed: 0, falseAlarm: 0, confusion: 0, der: 0 });
    expect(r.mapping).toEqual({ alice: 'B', bob: 'A' });
  });

  it('counts missed speech and false alarms', () => {
    // Ref speaks 0-10; sys 2-12: 2 s missed, 2 s false alarm.
    const r = fileDer([t('a', 0, 10)], [t('x', 2, 12)], noCollar);
    expect(r.missed).toBeCloseTo(2);
    expect(r.falseAlarm).toBeCloseTo(2);
    expect(r.confusion).toBe(0);
    expect(r.der).toBeCloseTo(0.4);
  });

  it('maps speakers optimally and counts the rest as confusion', () => {
    // Sys labels everything X: best mapping a->X (6 s), b is confused for 4 s.
    const r = fileDer([t('a', 0, 6), t('b', 6, 10)], [t('X', 0, 10)], noCollar);
    expect(r.mapping).toEqual({ a: 'X' });
    expect(r.confusion).toBeCloseTo(4);
    expect(r.der).toBeCloseTo(0.4);
  });

  it('prefers the globally best mapping over a greedy one', () => {
    // Greedy would map a->X (5) then b->Y (1): 6. Optimal a->Y (4) + b->X (4): 8.
    const ref = [t('a', 0, 9), t('b', 9, 13)];
    const sys = [t('X', 0, 5), t('Y', 5, 9), t('X', 9, 13)];
    const r = fileDer(ref, sys, noCollar);
    expect(r.mapping).toEqual({ a: 'Y', b: 'X' });
    expect(r.confusion).toBeCloseTo(5);
  });

  it('scores overlap: a missed second speaker is missed speech', () => {
    // a 0-10, b 4-6 overlaps; sys only finds a.
    const r = fileDer([t('a', 0, 10), t('b', 4, 6)], [t('A', 0, 10)], noCollar);
    expect(r.total).toBeCloseTo(12);
    expect(r.missed).toBeCloseTo(2);
    expect(r.der).toBeCloseTo(2 / 12);
  });

  it('scores overlap: a wrong second speaker in overlap is false alarm outside it', () => {
    const r = fileDer([t('a', 0, 10)], [t('A', 0, 10), t('B', 2, 3)], noCollar);
    expect(r.falseAlarm).toBeCloseTo(1);
    expect(r.der).toBeCloseTo(0.1);
  });

  it('splits missed speech into time the system hears nobody and voices it under-counts', () => {
    // a 0-10, b 4-8, c 5-6 (three at once for 1 s); sys hears nobody 0-2, one voice 2-10.
    const ref = [t('a', 0, 10), t('b', 4, 8), t('c', 5, 6)];
    const r = fileDer(ref, [t('A', 2, 10)], noCollar);
    expect(r.missed).toBeCloseTo(2 + 4 + 1);
    expect(r.missedUnheard).toBeCloseTo(2);
    expect(r.missedOverlap).toBeCloseTo(5);
    // Only the third voice of 5-6 is beyond two at once, whatever the system does.
    expect(r.beyondTwo).toBeCloseTo(1);
    expect(fileDer(ref, ref, noCollar).beyondTwo).toBeCloseTo(1);
    expect(fileDer(ref, ref, noCollar)).toMatchObject({ missed: 0, missedUnheard: 0, missedOverlap: 0 });
  });

  it('excludes a collar around every reference boundary', () => {
    // Boundaries at 0, 5, 10 with 0.25 s collars: scored ref = 10 - 4 * 0.25 = 9.
    // Sys switches 0.2 s late: inside the collar, so no error.
    const r = fileDer([t('a', 0, 5), t('b', 5, 10)], [t('A', 0, 5.2), t('B', 5.2, 10)]);
    expect(r.total).toBeCloseTo(9);
    expect(r.der).toBe(0);
    // 0.5 s late: 0.25 s of it falls outside the collar.
    const late = fileDer([t('a', 0, 5), t('b', 5, 10)], [t('A', 0, 5.5), t('B', 5.5, 10)]);
    expect(late.confusion).toBeCloseTo(0.25);
  });

  it('merges touching turns of one speaker before scoring (no collar between them)', () => {
    const r = fileDer([t('a', 0, 5), t('a', 5, 10)], [t('A', 0, 10)]);
    expect(r.total).toBeCloseTo(9.5);
    expect(r.der).toBe(0);
  });

  it('handles an empty system and an empty reference', () => {
    expect(fileDer([t('a', 0, 4)], [], noCollar)).toMatchObject({ missed: 4, der: 1 });
    expect(fileDer([], [t('A', 0, 4)], noCollar)).toMatchObject({ falseAlarm: 4, total: 0, der: 1 });
    expect(fileDer([], [], noCollar).der).toBe(0);
  });
});

describe('corpusDer', () => {
  it('sums error time over files, each with its own mapping', () => {
    const ref = [t('a', 0, 10, 'one'), t('a', 0, 10, 'two')];
    const sys = [t('X', 0, 10, 'one'), t('Y', 0, 5, 'two')];
    const r = corpusDer(ref, sys, noCollar);
    expect(r.files.one!.der).toBe(0);
    expect(r.files.two!.missed).toBeCloseTo(5);
    expect(r.der).toBeCloseTo(5 / 20);
  });
});

describe('maxWeightAssignment', () => {
  it('solves rectangular problems', () => {
    expect(
      maxWeightAssignment([
        [1, 9, 1],
        [9, 8, 1],
      ]),
    ).toEqual([1, 0]);
    expect(maxWeightAssignment([[5], [7], [1]])).toEqual([-1, 0, -1]);
    expect(maxWeightAssignment([])).toEqual([]);
  });
});

describe('parseRttm', () => {
  it('reads SPEAKER lines and skips the rest', () => {
    const text =
      ';; comment\nSPKR-INFO f 1 <NA> <NA> <NA> unknown a <NA>\nSPEAKER f 1 1.50 2.25 <NA> <NA> a <NA> <NA>\n';
    expect(parseRttm(text)).toEqual([{ file: 'f', start: 1.5, end: 3.75, speaker: 'a' }]);
  });

  it('rejects a malformed line', () => {
    expect(() => parseRttm('SPEAKER f 1 x 2 <NA> <NA> a')).toThrow(/line 1/);
  });
});
