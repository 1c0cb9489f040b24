import { type EvalFile, joinMeetings, placeTurns } from './eval-set';

const file = (id: string, seconds: number, turns: [string, number, number][]): EvalFile => ({
  id,
  audio: { samples: new Float32Array(seconds * 16000).fill(id.length / 10), sampleRate: 16000 },
  reference: turns.map(([speaker, start, end]) => ({ file: id, start, end, speaker })),
  uem: [0, seconds],
});

describe('joinMeetings', () => {
  it('joins excerpts that share a participant, in order, with the reference shifted', () => {
    const [ab, bc] = joinMeetings([
      file('a', 2, [['MEE1', 0, 1]]),
      file('bb', 3, [['FEO2', 0.5, 2.5]]),
      file('ccc', 1, [
        // the same person, once written decomposed (E + combining acute) and once composed
        ['ME\u0301O3', 0, 1],
        ['MEE1', 0.2, 0.4],
      ]),
      file('dddd', 2, [['M\u00c9O3', 1, 2]]),
    ]);
    expect(ab!.id).toBe('a+ccc+dddd');
    expect(ab!.uem).toEqual([0, 5]);
    expect(ab!.audio.samples.length).toBe(5 * 16000);
    // a's samples, then ccc's, then dddd's.
    expect([0, 2 * 16000, 3 * 16000].map((i) => ab!.audio.samples[i]!)).toEqual(
      [0.1, 0.3, 0.4].map((x) => Math.fround(x)),
    );
    expect(ab!.reference.map((t) => [t.speaker, t.start, t.end])).toEqual([
      ['MEE1', 0, 1],
      ['M\u00c9O3', 2, 3],
      ['MEE1', 2.2, 2.4],
      ['M\u00c9O3', 4, 5],
    ]);
    expect(bc).toMatchObject({ id: 'bb', uem: [0, 3] });
    expect(bc!.reference).toEqual([{ file: 'bb', start: 0.5, end: 2.5, speaker: 'FEO2' }]);
  });

  it('refuses an excerpt scored on part of its length', () => {
    const part = { ...file('a', 2, [['X', 0, 1]]), uem: [0, 1] as [number, number] };
    expect(() => joinMeetings([part])).toThrow(/scored whole/);
  });
});

describe('placeTurns', () => {
  it('moves the turns inside the UEM later, cuts them at the end, names them in NFC', () => {
    const f = {
      ...file('x', 4, [
        ['ME\u0301O3', 0.5, 1.5],
        ['MEE1', 2, 3.5],
        ['MEE1', 3.8, 4],
      ]),
      uem: [1, 4] as [number, number],
    };
    expect(placeTurns(f, 10, 'long', 13.6)).toEqual([
      { file: 'long', start: 11, end: 11.5, speaker: 'M\u00c9O3' },
      { file: 'long', start: 12, end: 13.5, speaker: 'MEE1' },
    ]);
  });
});
