import {
  type SubtitleContent,
  type SubtitleOptions,
  formatTimestamp,
  renderSubtitles,
} from './subtitle-render';

const OPTS: SubtitleOptions = { maxLineLength: 42, maxCueDuration: 6, maxLines: 2, speakerLabels: true };

const plain: SubtitleContent = {
  text: 'Hello there. How are you today?',
  words: [
    { start: 0.5, end: 0.9, text: 'Hello', speaker: null },
    { start: 0.9, end: 1.4, text: 'there.', speaker: null },
    { start: 62.345, end: 62.6, text: 'How', speaker: null },
    { start: 62.6, end: 62.8, text: 'are', speaker: null },
    { start: 62.8, end: 63, text: 'you', speaker: null },
    { start: 63, end: 63.5, text: 'today?', speaker: null },
  ],
  utterances: [
    { text: 'Hello there.', speaker: null },
    { text: 'How are you today?', speaker: null },
  ],
};

const diarized: SubtitleContent = {
  text: 'Hi, Bob. Hi <Alice> & co.',
  words: [
    { start: 0, end: 0.4, text: 'Hi,', speaker: 'A' },
    { start: 0.4, end: 0.8, text: 'Bob.', speaker: 'A' },
    { start: 1, end: 1.3, text: 'Hi', speaker: 'B' },
    { start: 1.3, end: 1.8, text: '<Alice>', speaker: 'B' },
    { start: 1.8, end: 2, text: '&', speaker: 'B' },
    { start: 2, end: 2.2, text: 'co.', speaker: 'B' },
  ],
  utterances: [
    { text: 'Hi, Bob.', speaker: 'A' },
    { text: 'Hi <Alice> & co.', speaker: 'B' },
  ],
};

describe('formatTimestamp', () => {
  it.each([
    [0, '00:00:00,000', '00:00:00.000'],
    [62.345, '00:01:02,345', '00:01:02.345'],
    [3599.9996, '01:00:00,000', '01:00:00.000'],
    [36_000, '10:00:00,000', '10:00:00.000'],
    [360_000.5, '100:00:00,500', '100:00:00.500'],
    [-1, '00:00:00,000', '00:00:00.000'],
  ])('%p s -> %p (SRT), %p (VTT)', (seconds, srt, vtt) => {
    expect(formatTimestamp(seconds, ',')).toBe(srt);
    expect(formatTimestamp(seconds, '.')).toBe(vtt);
  });
});

describe('renderSubtitles', () => {
  it('SRT: numbered cues, comma timestamps, blank line between cues', () => {
    expect(renderSubtitles('srt', plain, false, OPTS)).toBe(
      '1\n00:00:00,500 --> 00:00:01,400\nHello there.\n\n2\n00:01:02,345 --> 00:01:03,500\nHow are you today?\n',
    );
  });

  it('VTT: header, dot timestamps', () => {
    expect(renderSubtitles('vtt', plain, false, OPTS)).toBe(
      'WEBVTT\n\n00:00:00.500 --> 00:00:01.400\nHello there.\n\n00:01:02.345 --> 00:01:03.500\nHow are you today?\n',
    );
  });

  it('txt: the text', () => {
    expect(renderSubtitles('txt', plain, false, OPTS)).toBe('Hello there. How are you today?\n');
  });

  it('diarized SRT: `A: ` before each cue', () => {
    expect(renderSubtitles('srt', diarized, true, OPTS)).toBe(
      '1\n00:00:00,000 --> 00:00:00,800\nA: Hi, Bob.\n\n2\n00:00:01,000 --> 00:00:02,200\nB: Hi <Alice> & co.\n',
    );
  });

  it('diarized VTT: voice tags, cue text escaped', () => {
    expect(renderSubtitles('vtt', diarized, true, OPTS)).toBe(
      'WEBVTT\n\n00:00:00.000 --> 00:00:00.800\n<v A>Hi, Bob.\n\n' +
        '00:00:01.000 --> 00:00:02.200\n<v B>Hi &lt;Alice&gt; &amp; co.\n',
    );
  });

  it('diarized txt: one paragraph per utterance with its label', () => {
    expect(renderSubtitles('txt', diarized, true, OPTS)).toBe('A: Hi, Bob.\n\nB: Hi <Alice> & co.\n');
  });

  it('speakerLabels false: no labels, cues still split at the speaker change', () => {
    const off = { ...OPTS, speakerLabels: false };
    expect(renderSubtitles('srt', diarized, true, off)).toBe(
      '1\n00:00:00,000 --> 00:00:00,800\nHi, Bob.\n\n2\n00:00:01,000 --> 00:00:02,200\nHi <Alice> & co.\n',
    );
    expect(renderSubtitles('vtt', diarized, true, off)).not.toContain('<v ');
    expect(renderSubtitles('txt', diarized, true, off)).toBe('Hi, Bob.\n\nHi <Alice> & co.\n');
  });

  it('labels only when diarized, whatever the option says', () => {
    const labelled = { ...diarized, words: diarized.words.map((w) => ({ ...w, speaker: null })) };
    expect(renderSubtitles('srt', labelled, false, OPTS)).not.toMatch(/^[AB]: /m);
  });

  it('a diarized word without a speaker gets no label', () => {
    const content = { ...plain, utterances: [{ text: 'Hello there.', speaker: null }] };
    expect(renderSubtitles('srt', content, true, OPTS)).not.toContain('null');
    expect(renderSubtitles('txt', content, true, OPTS)).toBe('Hello there.\n');
  });

  it('an SRT label counts toward the first line', () => {
    const content: SubtitleContent = {
      text: 'abcdefghijkl mnopqrstuvwx',
      words: [
        { start: 0, end: 1, text: 'abcdefghijkl', speaker: 'A' },
        { start: 1, end: 2, text: 'mnopqrstuvwx', speaker: 'A' },
      ],
      utterances: [],
    };
    const opts = { ...OPTS, maxLineLength: 26, maxLines: 1 };
    expect(renderSubtitles('srt', content, true, opts)).toContain('A: abcdefghijkl\n\n2\n');
    // A VTT voice tag is not shown as text.
    expect(renderSubtitles('vtt', content, true, opts)).toContain('<v A>abcdefghijkl mnopqrstuvwx\n');
  });

  it('empty content: empty SRT and text, a bare VTT header', () => {
    const empty: SubtitleContent = { text: '', words: [], utterances: [] };
    expect(renderSubtitles('srt', empty, false, OPTS)).toBe('');
    expect(renderSubtitles('vtt', empty, false, OPTS)).toBe('WEBVTT\n');
    expect(renderSubtitles('txt', empty, false, OPTS)).toBe('');
    expect(renderSubtitles('txt', empty, true, OPTS)).toBe('');
  });
});
