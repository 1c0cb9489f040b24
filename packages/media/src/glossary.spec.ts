import { applyBuiltInCorrections, applyCorrections, applyGlossary, wordsToText } from './glossary';
import { type TimedWord } from './words';

/** Words one second apart, for readable expectations. */
const words = (...texts: string[]): TimedWord[] => texts.map((text, i) => ({ start: i, end: i + 0.5, text }));

describe('applyBuiltInCorrections', () => {
  it('collapses whitespace inside a word and drops empty words', () => {
    expect(applyBuiltInCorrections(words(' New  York ', '   ', 'city'))).toEqual([
      { start: 0, end: 0.5, text: 'New York' },
      { start: 2, end: 2.5, text: 'city' },
    ]);
  });

  it('attaches a punctuation-only word to the word before, stretching its end', () => {
    expect(applyBuiltInCorrections(words('Hello', ',', 'world', '?!'))).toEqual([
      { start: 0, end: 1.5, text: 'Hello,' },
      { start: 2, end: 3.5, text: 'world?!' },
    ]);
  });

  it('keeps leading punctuation-only words where there is no word before', () => {
    expect(applyBuiltInCorrections(words('.', 'Hi'))).toEqual(words('.', 'Hi'));
  });

  it('drops the [BLANK_AUDIO] silence marker', () => {
    expect(applyBuiltInCorrections(words('[BLANK_AUDIO]', 'Hi')).map((w) => w.text)).toEqual(['Hi']);
  });

  it('does not mutate its input', () => {
    const input = words('a', ',');
    applyBuiltInCorrections(input);
    expect(input).toEqual(words('a', ','));
  });
});

describe('applyGlossary', () => {
  it('replaces whole words case-insensitively, keeping timestamps', () => {
    expect(
      applyGlossary(words('deploy', 'to', 'KUBERNETTIES', 'today'), { kubernetties: 'Kubernetes' }),
    ).toEqual([
      ...words('deploy', 'to'),
      { start: 2, end: 2.5, text: 'Kubernetes' },
      { start: 3, end: 3.5, text: 'today' },
    ]);
  });

  it('never matches inside a word', () => {
    expect(applyGlossary(words('cathode', 'cat'), { cat: 'dog' }).map((w) => w.text)).toEqual([
      'cathode',
      'dog',
    ]);
  });

  it('keeps punctuation attached to the matched word', () => {
    expect(applyGlossary(words('"hark,"', 'hark.', '(hark)'), { hark: 'Hark' }).map((w) => w.text)).toEqual([
      '"Hark,"',
      'Hark.',
      '(Hark)',
    ]);
  });

  it('merges a multi-word match into one word from first start to last end', () => {
    const out = applyGlossary(words('I', 'use', 'pie', 'torch,', 'daily'), { 'Pie Torch': 'PyTorch' });
    expect(out).toEqual([
      ...words('I', 'use'),
      { start: 2, end: 3.5, text: 'PyTorch,' },
      { start: 4, end: 4.5, text: 'daily' },
    ]);
  });

  it('does not match a phrase across punctuation between its words', () => {
    expect(applyGlossary(words('pie,', 'torch'), { 'pie torch': 'PyTorch' }).map((w) => w.text)).toEqual([
      'pie,',
      'torch',
    ]);
  });

  it('prefers the longest phrase and does not chain replacements', () => {
    const glossary = { new: 'old', 'new york': 'New York City', city: 'town' };
    expect(applyGlossary(words('new', 'york', 'new'), glossary).map((w) => w.text)).toEqual([
      'New York City',
      'old',
    ]);
  });

  it('consumes punctuation the key itself holds', () => {
    expect(applyGlossary(words('Dr.', 'Who'), { 'dr.': 'Doctor' }).map((w) => w.text)).toEqual([
      'Doctor',
      'Who',
    ]);
  });

  it('keeps extra fields of the first word (a speaker label)', () => {
    const labelled = words('jay', 'son').map((w) => ({ ...w, speaker: 'A' }));
    expect(applyGlossary(labelled, { 'jay son': 'JSON' })).toEqual([
      { start: 0, end: 1.5, text: 'JSON', speaker: 'A' },
    ]);
  });

  it('ignores entries with an empty side', () => {
    expect(applyGlossary(words('a'), { ' ': 'x', a: ' ' })).toEqual(words('a'));
  });
});

describe('applyCorrections', () => {
  it('runs built-in corrections first, so a detached comma does not block a match', () => {
    const out = applyCorrections(words('hello', 'hark', ','), { 'hark,': 'Hark!' });
    expect(out.map((w) => w.text)).toEqual(['hello', 'Hark!']);
    expect(out[1]).toEqual({ start: 1, end: 2.5, text: 'Hark!' });
  });

  it('applies only the built-in list without a glossary', () => {
    expect(applyCorrections(words('a', '.'), null)).toEqual([{ start: 0, end: 1.5, text: 'a.' }]);
  });
});

describe('wordsToText', () => {
  it('joins words with single spaces', () => {
    expect(wordsToText(words('Hello,', ' world. ', ''))).toBe('Hello, world.');
    expect(wordsToText([])).toBe('');
  });
});
