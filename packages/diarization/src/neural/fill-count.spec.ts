import type { Segment } from '../timeline';
import { fillCount, twoMeans } from './fill-count';

const A = Float32Array.from([1, 0, 0]);
const B = Float32Array.from([0, 1, 0]);
const C = Float32Array.from([0, 0, 1]);
/** An embedder that hears voice `at(t)` at the middle of the span. */
const voices = (at: (t: number) => Float32Array) => async (start: number, end: number) =>
  at((start + end) / 2);
const seg = (start: number, end: number, ...speakers: number[]): Segment<number> => ({
  start,
  end,
  speakers,
});
const total = (s: Segment<number>[]) => s.reduce((sum, x) => sum + x.end - x.start, 0);

describe('fillCount', () => {
  it('splits one voice where its embeddings part (pieces of 1.5 s), the larger part keeping its name', async () => {
    const out = await fillCount(
      [seg(0, 12, 0)],
      2,
      voices((t) => (t < 9 ? A : B)),
    );
    expect(out).toEqual([seg(0, 9, 0), seg(9, 12, 1)]);
  });

  it('splits again, the talkiest speaker first, until the count is met; overlap keeps its names', async () => {
    const input = [seg(0, 6, 0), seg(6, 7, 0, 1), seg(7, 9, 1)];
    const out = await fillCount(
      input,
      3,
      voices((t) => (t < 3 ? A : t < 6 ? C : B)),
    );
    expect(out).toEqual([seg(0, 3, 0), seg(3, 6, 2), seg(6, 7, 0, 1), seg(7, 9, 1)]);
    expect(total(out)).toBe(total(input));
  });

  it('one short turn is cut in time; under 0.4 s there is nothing to split and the count stays short', async () => {
    expect(
      await fillCount(
        [seg(1, 1.6, 0)],
        2,
        voices(() => A),
      ),
    ).toEqual([seg(1, 1.3, 0), seg(1.3, 1.6, 1)]);
    expect(
      await fillCount(
        [seg(1, 1.3, 0)],
        2,
        voices(() => A),
      ),
    ).toEqual([seg(1, 1.3, 0)]);
    expect(
      await fillCount(
        [],
        3,
        voices(() => A),
      ),
    ).toEqual([]);
  });

  it('leaves a timeline that already has the count alone, embedding nothing', async () => {
    const input = [seg(0, 5, 0), seg(5, 9, 1)];
    const embed = jest.fn(voices(() => A));
    expect(await fillCount(input, 2, embed)).toBe(input);
    expect(embed).not.toHaveBeenCalled();
  });

  it('twoMeans: seeds with the least alike pair and never leaves a group empty', () => {
    expect(twoMeans([A, A, B, B, A])).toEqual([0, 0, 1, 1, 0]);
    expect(twoMeans([A, A])).toEqual([0, 1]);
  });
});
