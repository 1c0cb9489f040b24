import { buildContent, parseGlossary, parseSpeakers, utterancesFromWords } from './transcript-content';

const w = (start: number, end: number, text: string, speaker: string | null = null) => ({
  start,
  end,
  text,
  speaker,
});

describe('utterancesFromWords', () => {
  it('splits at pauses longer than a second, not at shorter ones', () => {
    const words = [w(0, 0.4, 'Hello'), w(0.5, 0.9, 'there.'), w(1.9, 2.2, 'Next'), w(3.3, 3.6, 'one.')];
    expect(utterancesFromWords(words)).toEqual([
      { start: 0, end: 2.2, text: 'Hello there. Next', speaker: null, overlap: false },
      { start: 3.3, end: 3.6, text: 'one.', speaker: null, overlap: false },
    ]);
  });

  it('splits where the speaker changes', () => {
    const words = [w(0, 1, 'a', 'A'), w(1, 2, 'b', 'B'), w(2, 3, 'c', 'B')];
    expect(utterancesFromWords(words).map((u) => [u.speaker, u.text])).toEqual([
      ['A', 'a'],
      ['B', 'b c'],
    ]);
  });

  it('is empty for no words', () => {
    expect(utterancesFromWords([])).toEqual([]);
  });
});

describe('buildContent', () => {
  const engineWords = [
    { start: 0, end: 0.5, text: 'deploy' },
    { start: 0.5, end: 1, text: 'kubernetes' },
    { start: 1, end: 1.1, text: ',' },
    { start: 1.2, end: 1.5, text: '[BLANK_AUDIO]' },
    { start: 3, end: 3.5, text: 'today.' },
  ];

  it('without speakers: corrections and glossary on words, text and utterances alike; no speaker fields', () => {
    const { content, speakerCount } = buildContent(engineWords, { kubernetes: 'Kubernetes' }, null);
    expect(speakerCount).toBeNull();
    expect(content.diarizationSegments).toBeNull();
    expect(content.words).toEqual([w(0, 0.5, 'deploy'), w(0.5, 1.1, 'Kubernetes,'), w(3, 3.5, 'today.')]);
    expect(content.text).toBe('deploy Kubernetes, today.');
    expect(content.utterances).toEqual([
      { start: 0, end: 1.1, text: 'deploy Kubernetes,', speaker: null, overlap: false },
      { start: 3, end: 3.5, text: 'today.', speaker: null, overlap: false },
    ]);
  });

  it('with a diarization timeline: labels words, groups by speaker, keeps the segments', () => {
    const segments = [
      { start: 0, end: 1.2, speakers: ['A'] },
      { start: 2.8, end: 4, speakers: ['B'] },
    ];
    const { content, speakerCount } = buildContent(engineWords, null, { segments, speakerCount: 2 });
    expect(speakerCount).toBe(2);
    expect(content.diarizationSegments).toEqual(segments);
    expect((content.words as { speaker: string }[]).map((x) => x.speaker)).toEqual(['A', 'A', 'B']);
    expect(content.utterances).toEqual([
      { start: 0, end: 1.1, text: 'deploy kubernetes,', speaker: 'A', overlap: false },
      { start: 3, end: 3.5, text: 'today.', speaker: 'B', overlap: false },
    ]);
  });

  it('with the speech gate: words the timeline does not come near leave text, words, utterances and segments', () => {
    // "Thanks for watching." over 5-6.5 s of silence: 1 s from the timeline, which ends at 4 s.
    const words = [
      ...engineWords,
      { start: 5, end: 6, text: 'Thanks' },
      { start: 6, end: 6.5, text: 'watching.' },
    ];
    const segments = [
      { start: 0, end: 1.2, speakers: ['A'] },
      { start: 2.8, end: 4, speakers: ['B'] },
    ];
    const engineSegments = [
      { start: 0, end: 4, text: 'x', tokens: [1], avgLogprob: -0.2 },
      { start: 4, end: 7, text: 'y', tokens: [2], avgLogprob: -0.9 },
    ];
    const gated = buildContent(words, null, { segments, speakerCount: 2 }, engineSegments, {
      speech: segments,
    });
    expect(gated.content.text).toBe('deploy kubernetes, today.');
    expect((gated.content.words as { text: string }[]).map((x) => x.text)).toEqual([
      'deploy',
      'kubernetes,',
      'today.',
    ]);
    expect((gated.content.utterances as { text: string }[]).map((u) => u.text)).toEqual([
      'deploy kubernetes,',
      'today.',
    ]);
    expect((gated.content.segments as { start: number }[]).map((x) => x.start)).toEqual([0]);
    expect(gated.speakerCount).toBe(2);
    // Without speakers, by the speech pass's regions: the same words, no labels.
    const plain = buildContent(words, null, null, undefined, { speech: [{ start: 0, end: 4 }] });
    expect(plain.content.text).toBe('deploy kubernetes, today.');
    expect(plain.speakerCount).toBeNull();
    // Off (the default), or when nobody was heard at all: every word stays.
    const off = buildContent(words, null, { segments, speakerCount: 2 });
    expect(off.content.text).toBe('deploy kubernetes, today. Thanks watching.');
    expect(buildContent(words, null, null).content.text).toBe('deploy kubernetes, today. Thanks watching.');
    const nobody = buildContent(words, null, { segments: [], speakerCount: 0 }, undefined, { speech: [] });
    expect(nobody.content.words.length).toBe(5);
  });

  it('with the speech gate: word edges in its silence move onto the speech (a first word DTW put early)', () => {
    // jfk.wav: DTW puts "And" at 5.86 s; it is spoken from about 6.3 s, where the timeline begins.
    const words = [
      { start: 5.86, end: 6.5, text: 'And' },
      { start: 6.5, end: 6.8, text: 'so,' },
      { start: 10.2, end: 11.9, text: 'Americans.' },
    ];
    const segments = [{ start: 6.3031, end: 11.5, speakers: ['A'] }];
    const { content } = buildContent(words, null, { segments, speakerCount: 1 }, undefined, {
      speech: segments,
    });
    expect(content.words).toEqual([
      w(6.303, 6.5, 'And', 'A'),
      w(6.5, 6.8, 'so,', 'A'),
      w(10.2, 11.5, 'Americans.', 'A'),
    ]);
    expect((content.utterances as { start: number; end: number }[]).map((u) => [u.start, u.end])).toEqual([
      [6.303, 11.5],
    ]);
    // Without speakers, by the speech pass; and with the gate off, the engine's times stay.
    const plain = buildContent(words, null, null, undefined, { speech: [{ start: 6.3, end: 12 }] });
    expect((plain.content.words as { start: number }[]).map((x) => x.start)).toEqual([6.3, 6.5, 10.2]);
    const off = buildContent(words, null, { segments, speakerCount: 1 });
    expect((off.content.words as { start: number }[]).map((x) => x.start)).toEqual([5.86, 6.5, 10.2]);
    // The engine's segments keep their words by the engine's times: "And" stays in the segment
    // that ends at 6.1 s though its start moved to 6.3 s.
    const engineSegments = [
      { start: 5.5, end: 6.1, text: 'x', tokens: [1], avgLogprob: -0.2 },
      { start: 6.1, end: 12, text: 'y', tokens: [2], avgLogprob: -0.3 },
    ];
    const stored = buildContent(words, null, null, engineSegments, { speech: segments });
    expect((stored.content.segments as { text: string }[]).map((x) => x.text)).toEqual([
      'And',
      'so, Americans.',
    ]);
  });

  it('rounds the timeline to milliseconds', () => {
    const segments = [{ start: 0.29000000000000004, end: 2.238, speakers: ['A'] }];
    const { content } = buildContent([], null, { segments, speakerCount: 1 });
    expect(content.diarizationSegments).toEqual([{ start: 0.29, end: 2.238, speakers: ['A'] }]);
  });

  it('speakers asked, no speech found: empty timeline, speakerCount 0', () => {
    const { content, speakerCount } = buildContent([], null, { segments: [], speakerCount: 0 });
    expect(speakerCount).toBe(0);
    expect(content).toEqual({ text: '', words: [], utterances: [], diarizationSegments: [] });
  });
});

describe('column parsing', () => {
  it('speakers: null | true | integer | {min,max}', () => {
    expect(parseSpeakers(null)).toBeNull();
    expect(parseSpeakers(true)).toBe(true);
    expect(parseSpeakers(3)).toBe(3);
    expect(parseSpeakers({ min: 2, max: 4 })).toEqual({ min: 2, max: 4 });
    expect(parseSpeakers(false)).toBeNull();
    expect(parseSpeakers('2-4')).toBeNull();
  });

  it('glossary: string pairs only', () => {
    expect(parseGlossary(null)).toBeNull();
    expect(parseGlossary({})).toBeNull();
    expect(parseGlossary({ a: 'b', c: 1 })).toEqual({ a: 'b' });
    expect(parseGlossary(['a'])).toBeNull();
  });
});

describe('engine segments', () => {
  const seg = (start: number, end: number, text: string, tokens: number[]) => ({
    start,
    end,
    text,
    tokens,
    avgLogprob: -0.25,
  });

  it('keep their timing, tokens and log-probability; their text comes from the corrected words', () => {
    const words = [
      { start: 0, end: 0.4, text: 'hark' },
      { start: 0.5, end: 0.9, text: 'rocks.' },
      { start: 3.8, end: 4.2, text: 'Again.' },
    ];
    const segments = [
      seg(0, 3.8, 'hark rocks.', [50363, 1, 2]),
      seg(3.8, 5, 'Again.', [3]),
      seg(5, 6, '', []),
    ];
    const { content } = buildContent(words, { hark: 'Hark' }, null, segments);
    expect(content.segments).toEqual([
      { start: 0, end: 3.8, text: 'Hark rocks.', tokens: [50363, 1, 2], avgLogprob: -0.25 },
      { start: 3.8, end: 5, text: 'Again.', tokens: [3], avgLogprob: -0.25 },
    ]);
    expect(content.text).toBe('Hark rocks. Again.');
  });

  it('are not stored when the engine gave none to pass on', () => {
    expect(buildContent([], null, null).content).not.toHaveProperty('segments');
    expect(buildContent([], null, null, []).content.segments).toEqual([]);
  });
});
