import { normalise } from './embedding-clustering';
import { relabelLongTurns } from './long-turns';

const unit = (...v: number[]) => normalise(Float32Array.from(v));
const A = unit(1, 0, 0);
const B = unit(0, 1, 0);

/** A fake embedder: voice B from `changeAt` seconds on, A before (by the piece's midpoint). */
function voices(changeAt: number, calls: [number, number][] = []) {
  return async (start: number, end: number) => {
    calls.push([start, end]);
    return (start + end) / 2 >= changeAt ? unit(0.2, 1, 0) : unit(1, 0.2, 0);
  };
}

describe('relabelLongTurns', () => {
  it('gives the pieces of a long turn where another voice takes over to that speaker', async () => {
    const calls: [number, number][] = [];
    const out = await relabelLongTurns([{ start: 0, end: 6, speakers: [0] }], [A, B], 0.1, voices(3, calls));
    expect(out).toEqual([
      { start: 0, end: 3, speakers: [0] },
      { start: 3, end: 6, speakers: [1] },
    ]);
    // Four pieces of 1.5 s, covering the turn end to end.
    expect(calls).toEqual([
      [0, 1.5],
      [1.5, 3],
      [3, 4.5],
      [4.5, 6],
    ]);
  });

  it('joins a relabelled piece to the next segment of the same speaker', async () => {
    const out = await relabelLongTurns(
      [
        { start: 0, end: 4.5, speakers: [0] },
        { start: 4.5, end: 5, speakers: [1] },
      ],
      [A, B],
      0.1,
      voices(3),
    );
    expect(out).toEqual([
      { start: 0, end: 3, speakers: [0] },
      { start: 3, end: 5, speakers: [1] },
    ]);
  });

  it('keeps short turns, overlapped ones, and pieces not closer to another speaker by the margin', async () => {
    const segments = [
      { start: 0, end: 2.9, speakers: [0] },
      { start: 2.9, end: 9, speakers: [0, 1] },
      { start: 9, end: 15, speakers: [1] },
    ];
    const closerToA = async () => unit(1, 0.9, 0); // 0.74 to A, 0.67 to B: closer by 0.07
    expect(await relabelLongTurns(segments, [A, B], 0.1, closerToA)).toEqual(segments);
    // With no margin the long turn's pieces move to A; the short and overlapped turns still do not.
    expect(await relabelLongTurns(segments, [A, B], 0, async () => unit(0.9, 1, 0))).toEqual(segments);
    expect(await relabelLongTurns(segments, [A, B], 0, closerToA)).toEqual([
      segments[0],
      segments[1],
      { start: 9, end: 15, speakers: [0] },
    ]);
  });
});
