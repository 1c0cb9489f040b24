import type { Segment } from './timeline';
import { buildUtterances, labelWords, type LabeledWord, snapToSpeech, wordsNearSpeech } from './words';

const seg = (start: number, end: number, ...speakers: string[]): Segment => ({ start, end, speakers });
const word = (start: number, end: number, text = 'w') => ({ start, end, text });

describe('labelWords', () => {
  const segments = [seg(0, 2, 'A'), seg(2, 4, 'B'), seg(4, 5, 'A', 'B'), seg(6, 8, 'A')];

  it('gives each word the speaker overlapping it most', () => {
    const out = labelWords([word(0.5, 1), word(1.8, 2.5), word(1.5, 2.1)], segments);
    expect(out.map((w) => w.speaker)).toEqual(['A', 'B', 'A']);
  });

  it('counts a multi-speaker segment for each of its speakers', () => {
    // 3.8-4.6: B 0.2 s alone + 0.6 s in A+B = 0.8 for B, 0.6 for A.
    expect(labelWords([word(3.8, 4.6)], segments)[0]!.speaker).toBe('B');
  });

  it('breaks a tie inside an overlap in favour of the previous word', () => {
    const out = labelWords([word(1, 1.5), word(4.2, 4.6), word(3, 3.5), word(4.2, 4.6)], segments);
    expect(out.map((w) => w.speaker)).toEqual(['A', 'A', 'B', 'B']);
  });

  it('takes the nearest segment for a word in a gap', () => {
    const out = labelWords([word(5.2, 5.4), word(5.7, 5.9), word(9, 9.5)], segments);
    // 5.2: 0.2 s after A+B (tie, no previous: A), 5.7: 0.1 s before A, 9: after the last A.
    expect(out.map((w) => w.speaker)).toEqual(['A', 'A', 'A']);
    expect(labelWords([word(5.05, 5.1)], [seg(0, 5, 'B'), seg(6, 7, 'A')])[0]!.speaker).toBe('B');
  });

  it('labels a zero-length word by the segment containing it', () => {
    expect(labelWords([word(3, 3)], segments)[0]!.speaker).toBe('B');
  });

  it('gives null without segments and keeps extra word fields', () => {
    const out = labelWords([{ ...word(0, 1), confidence: 0.9 }], []);
    expect(out).toEqual([{ start: 0, end: 1, text: 'w', confidence: 0.9, speaker: null }]);
  });

  it('handles unsorted, overlapping segments', () => {
    const out = labelWords([word(1, 2)], [seg(1.5, 3, 'B'), seg(0, 10, 'C'), seg(0.9, 1.2, 'A')]);
    expect(out[0]!.speaker).toBe('C');
  });
});

describe('buildUtterances', () => {
  const lw = (start: number, end: number, text: string, speaker: string | null): LabeledWord => ({
    start,
    end,
    text,
    speaker,
  });

  it('groups consecutive words of one speaker', () => {
    const words = [
      lw(0, 0.5, ' Hello', 'A'),
      lw(0.6, 1, 'there.', 'A'),
      lw(1.5, 2, 'Hi', 'B'),
      lw(3, 3.5, 'Bye', 'A'),
    ];
    const segments = [seg(0, 1, 'A'), seg(1.5, 2, 'B'), seg(3, 3.5, 'A')];
    expect(buildUtterances(words, segments)).toEqual([
      { start: 0, end: 1, text: 'Hello there.', speaker: 'A', overlap: false },
      { start: 1.5, end: 2, text: 'Hi', speaker: 'B', overlap: false },
      { start: 3, end: 3.5, text: 'Bye', speaker: 'A', overlap: false },
    ]);
  });

  it('flags overlap with another speaker or a multi-speaker segment, ignoring boundary jitter', () => {
    const segments = [seg(0, 3, 'A'), seg(2, 5, 'B'), seg(6, 7, 'A', 'B'), seg(7, 9, 'A')];
    const out = buildUtterances([lw(0, 2.5, 'a', 'A'), lw(2.6, 5, 'b', 'B'), lw(6.5, 8, 'c', 'A')], segments);
    expect(out.map((u) => u.overlap)).toEqual([true, true, true]);
    const jitter = buildUtterances([lw(0, 2.1, 'a', 'A')], [seg(0, 2, 'A'), seg(1.95, 4, 'B')]);
    expect(jitter[0]!.overlap).toBe(false);
  });

  it('keeps speaker null (diarization not requested) without overlap', () => {
    expect(buildUtterances([lw(0, 1, 'a', null), lw(1, 2, 'b', null)], [])).toEqual([
      { start: 0, end: 2, text: 'a b', speaker: null, overlap: false },
    ]);
  });

  it('returns nothing for no words', () => {
    expect(buildUtterances([], [seg(0, 1, 'A')])).toEqual([]);
  });
});

describe('wordsNearSpeech', () => {
  const segments = [seg(6, 8, 'A'), seg(1, 2, 'A'), seg(1.5, 4, 'B', 'A')];

  it('keeps the words within the margin of a segment and drops those farther out', () => {
    const words = [
      word(0, 0.5, 'invented'), // 0.5 s before the first segment
      word(0.6, 0.8, 'edge'), // 0.2 s before it: within 0.25 s
      word(2.5, 3, 'inside'),
      word(4.1, 4.3, 'after'),
      word(4.5, 5.5, 'silence'), // 0.5 s from both neighbours
      word(5.8, 5.9, 'lead-in'),
      word(9, 10, 'tail'),
    ];
    expect(wordsNearSpeech(words, segments).map((w) => w.text)).toEqual([
      'edge',
      'inside',
      'after',
      'lead-in',
    ]);
    expect(wordsNearSpeech(words, segments, 0.6).map((w) => w.text)).toEqual([
      'invented',
      'edge',
      'inside',
      'after',
      'silence',
      'lead-in',
    ]);
  });

  it('keeps a word spanning a segment, and a segment nested in an earlier longer one counts', () => {
    const nested = [seg(0, 10, 'A'), seg(2, 3, 'B')];
    expect(wordsNearSpeech([word(9, 9.5), word(-1, 11), word(11, 12)], nested).map((w) => w.start)).toEqual([
      9, -1,
    ]);
  });

  it('keeps every word when the timeline heard nobody, and keeps extra fields', () => {
    const words = [{ ...word(1, 2), speaker: null }];
    expect(wordsNearSpeech(words, [])).toEqual(words);
    expect(wordsNearSpeech([], segments)).toEqual([]);
  });
});

describe('snapToSpeech', () => {
  const w = (text: string, start: number, end: number) => ({ text, start, end });
  const speech = [
    { start: 6.3, end: 8, speakers: ['A'] },
    { start: 8, end: 11, speakers: ['B'] },
    { start: 20, end: 22, speakers: ['A', 'B'] },
  ];
  // Two stretches of one voice with a pause between.
  const gaps = [
    { start: 1, end: 1.5, speakers: ['A'] },
    { start: 2, end: 3, speakers: ['A'] },
  ];

  it('moves a start in silence to where the speech it reaches begins (jfk.wav after a 6 s lead-in: "And" at 5.86 s, spoken from 6.3 s)', () => {
    const [and, so] = snapToSpeech([w('And', 5.86, 6.5), w('so', 6.5, 6.8)], speech);
    expect(and).toEqual({ text: 'And', start: 6.3, end: 6.5 });
    expect(so).toEqual(w('so', 6.5, 6.8));
  });

  it('moves an end in silence back to where the speech holding the word ends, across segments of other speakers', () => {
    // 6.3-11 is one stretch of speech though two speakers share it.
    expect(snapToSpeech([w('friends', 10.5, 11.4)], speech)).toEqual([w('friends', 10.5, 11)]);
    expect(snapToSpeech([w('both', 19.7, 22.3)], speech)).toEqual([w('both', 20, 22)]);
  });

  it('leaves words in speech, words in no speech, far edges and slivers as they are', () => {
    const words = [
      w('inside', 7, 7.5),
      w('silence', 14, 15), // the gate's business, not this one's
      w('far', 18.5, 20.5), // 1.5 s before the speech: more than maxShift
      w('sliver', 6.0, 6.32), // would keep 0.02 s of itself
    ];
    expect(snapToSpeech(words, speech)).toEqual(words);
    expect(snapToSpeech(words, [])).toEqual(words);
    // The same object back when nothing moves; a copy when something does.
    const kept = w('inside', 6.5, 6.8); // 1.2 s before the next change (8 s)
    expect(snapToSpeech([kept], speech)[0]).toBe(kept);
    // Within 2 s, both edges: the start onto the speech, the end held to the stretch's end.
    expect(snapToSpeech([w('far', 18.5, 20.5)], speech, { maxShift: 2 })).toEqual([w('far', 20, 22)]);
  });

  it('keeps overlapping words in order, sorts the segments, and ignores segments that are not finite', () => {
    // Token times may overlap: the first word's start stops at the next word's.
    const [a, b] = snapToSpeech([w('a', 5.5, 6.6), w('b', 6.0, 6.2)], speech);
    expect(a!.start).toBe(6.0);
    expect(b).toEqual(w('b', 6.0, 6.2));
    const shuffled = [speech[2]!, { start: Number.NaN, end: 3, speakers: ['A'] }, speech[1]!, speech[0]!];
    expect(snapToSpeech([w('And', 5.86, 6.5), w('both', 19.7, 22.3)], shuffled)).toEqual([
      w('And', 6.3, 6.5),
      w('both', 20, 22),
    ]);
  });

  it('holds the last word of a stretch of speech to where the stretch ends, at most maxShift later', () => {
    // DTW ends the word before a pause early, inside the speech: jfk.wav's "you," at 7.28 s,
    // whose voice fades out by about 7.5 s.
    const words = [w('ask', 10.0, 10.3), w('you,', 10.3, 10.6), w('and', 20.2, 20.5)];
    expect(snapToSpeech(words, speech)).toEqual([
      w('ask', 10.0, 10.3), // the next word starts in the same stretch
      w('you,', 10.3, 11), // the stretch's last word: 0.4 s later
      w('and', 20.2, 20.5), // its stretch ends 1.5 s later: more than maxShift
    ]);
    expect(snapToSpeech([w('and', 20.2, 20.5)], speech, { maxShift: 2 })).toEqual([w('and', 20.2, 22)]);
    // Never onto a later word, which token times may start before the stretch ends, even out of order.
    expect(snapToSpeech([w('you,', 10.3, 10.6), w('all', 10.8, 12)], speech)).toEqual([
      w('you,', 10.3, 10.6),
      w('all', 10.8, 11),
    ]);
    expect(snapToSpeech([w('you,', 10.3, 10.6), w('later', 12, 12.5), w('all', 10.7, 10.9)], speech)).toEqual(
      [w('you,', 10.3, 10.6), w('later', 12, 12.5), w('all', 10.7, 11)],
    );
  });

  it('holds an end only as far as the next change of who speaks, never into another voice', () => {
    // A to 8 s, then B alone to 11 s, with none of B's words transcribed (a "mm-hmm"): "you," is
    // A's, and held to 11 s it would be labelled B's.
    expect(snapToSpeech([w('you,', 7.5, 7.8)], speech)).toEqual([w('you,', 7.5, 8)]);
    // B joins A at 7.5 s: A's word ending at 7.2 s stops at 7.5 s.
    const joined = [
      { start: 6.3, end: 8, speakers: ['A'] },
      { start: 7.5, end: 8.6, speakers: ['B'] },
    ];
    expect(snapToSpeech([w('so', 6.9, 7.2)], joined)).toEqual([w('so', 6.9, 7.5)]);
    // A word ending right on a change is not carried across it.
    expect(snapToSpeech([w('right', 7.7, 8)], speech)).toEqual([w('right', 7.7, 8)]);
  });

  it('does not stretch a word that only touches the speech across it', () => {
    expect(snapToSpeech([w('touch', 0.6, 1.0)], gaps)).toEqual([w('touch', 0.6, 1.0)]);
    expect(snapToSpeech([w('into', 0.6, 1.2)], gaps)).toEqual([w('into', 1, 1.5)]);
  });

  it('ends a word spanning several stretches of speech where the last one it reaches ends', () => {
    expect(snapToSpeech([w('long', 0.8, 3.5)], gaps)).toEqual([w('long', 1, 3)]);
  });
});
