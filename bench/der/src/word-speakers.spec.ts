import { scoreWords } from './word-speakers';
import type { Turn } from './rttm';

const turn = (speaker: string, start: number, end: number): Turn => ({ file: 'f', start, end, speaker });
const word = (start: number, end: number, speaker: string | null) => ({ start, end, speaker });

describe('scoreWords', () => {
  const reference = [turn('ALICE', 0, 5), turn('BOB', 4, 10), turn('CAROL', 20, 21)];
  const mapping = { ALICE: 'A', BOB: 'B' }; // CAROL has no system speaker

  it('counts a word right when its label maps to the reference speaker who says it', () => {
    expect(scoreWords([word(1, 1.5, 'A'), word(6, 6.5, 'B')], reference, mapping)).toEqual({
      words: 2,
      scored: 2,
      wrong: 0,
      outside: 0,
      wder: 0,
    });
  });

  it('counts the other speaker, an unmapped speaker and no label as wrong', () => {
    const r = scoreWords([word(1, 1.5, 'B'), word(20.2, 20.4, 'A'), word(6, 6.5, null)], reference, mapping);
    expect(r).toEqual({ words: 3, scored: 3, wrong: 3, outside: 0, wder: 1 });
  });

  it('takes either voice of an overlap, but not a voice that covers under half the word', () => {
    // 4.0-4.6: both speak throughout; 4.7-5.3: ALICE covers 0.3 of 0.6 s (half), BOB all of it;
    // 4.9-5.5: ALICE covers 0.1 of 0.6 s.
    const words = [word(4, 4.6, 'A'), word(4, 4.6, 'B'), word(4.7, 5.3, 'A'), word(4.9, 5.5, 'A')];
    expect(scoreWords(words, reference, mapping)).toMatchObject({ scored: 4, wrong: 1 });
  });

  it('gives a word mostly outside every turn to the speaker covering most of it', () => {
    // 9.8-10.6: BOB covers 0.2 of 0.8 s, nobody else.
    expect(scoreWords([word(9.8, 10.6, 'B')], reference, mapping)).toMatchObject({ scored: 1, wrong: 0 });
    expect(scoreWords([word(9.8, 10.6, 'A')], reference, mapping)).toMatchObject({ scored: 1, wrong: 1 });
  });

  it('leaves words in reference silence out of the rate and counts them apart', () => {
    const r = scoreWords([word(12, 12.5, 'A'), word(1, 1.5, 'B')], reference, mapping);
    expect(r).toEqual({ words: 2, scored: 1, wrong: 1, outside: 1, wder: 1 });
  });

  it('reports 0 for no scored words', () => {
    expect(scoreWords([], reference, mapping)).toEqual({
      words: 0,
      scored: 0,
      wrong: 0,
      outside: 0,
      wder: 0,
    });
  });
});
