import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseWhisperJson, repairJson, WhisperOutputError } from './whisper-output';

// Fixtures follow whisper.cpp 1.9.1 `output_json` (-ojf) byte for byte (tabs, float format);
// whisper-full-empty.ojf.txt is a real file written by whisper-cli with the test model. The .txt
// extension keeps the formatter from rewriting them.
const fixture = (name: string) => readFileSync(join(__dirname, '__fixtures__', name), 'utf8');

describe('parseWhisperJson', () => {
  it('builds words from timed tokens across segments, dropping special tokens', () => {
    const result = parseWhisperJson(fixture('whisper-full-jfk.en.ojf.txt'));

    expect(result.language).toBe('en');
    expect(result.words).toHaveLength(22);
    expect(result.words.slice(0, 6)).toEqual([
      { start: 0, end: 0.32, text: 'And' },
      { start: 0.32, end: 0.57, text: 'so' },
      { start: 0.57, end: 0.76, text: 'my' },
      { start: 0.76, end: 1.13, text: 'fellow' },
      // " Americ" + "ans" + "," are one word: only a leading space starts a new one.
      { start: 1.13, end: 1.92, text: 'Americans,' },
      { start: 3.8, end: 4.28, text: 'ask' },
    ]);
    expect(result.words.at(-1)).toEqual({ start: 10.34, end: 10.76, text: 'country.' });
    expect(result.segments).toEqual([
      {
        start: 0,
        end: 3.8,
        text: 'And so my fellow Americans,',
        tokens: expect.arrayContaining([50363, 843, 523]),
        avgLogprob: expect.any(Number),
      },
      {
        start: 3.8,
        end: 11,
        text: 'ask not what your country can do for you, ask what you can do for your country.',
        tokens: expect.any(Array),
        avgLogprob: expect.any(Number),
      },
    ]);
    // Every token id, [_BEG_] included; the mean log-probability of the text tokens only.
    expect(result.segments[0]!.tokens[0]).toBe(50363);
    expect(result.segments[0]!.avgLogprob).toBeLessThan(0);
    expect(result.segments[0]!.avgLogprob).toBeGreaterThan(-1);
    expect(result.text).toBe(
      'And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.',
    );
    expect(result.words.some((w) => w.text.includes('[_'))).toBe(false);
  });

  it('times words by their DTW token times when every text token has one (whisper-cli -dtw)', () => {
    // A real file: whisper-cli -dtw base (flash attention on: scripts/whisper-patches/0004), ggml-base q8_0, jfk.wav.
    const { words } = parseWhisperJson(fixture('whisper-full-jfk.dtw.ojf.txt'));
    expect(words.map((w) => w.text).join(' ')).toBe(
      'And so my fellow Americans ask not what your country can do for you, ask what you can do for your country.',
    );
    // A word ends at its last text token's t_dtw and starts where the word before it ended...
    expect(words.slice(0, 5)).toEqual([
      { start: 0, end: 0.54, text: 'And' },
      { start: 0.54, end: 0.86, text: 'so' },
      { start: 0.86, end: 1.2, text: 'my' },
      { start: 1.2, end: 1.6, text: 'fellow' },
      // ...at most twice the median word length (0.34 s here) before its end.
      { start: 1.64, end: 2.32, text: 'Americans' },
    ]);
    // The first "ask" follows the pause after "Americans": its start is the cap, not 2.32.
    expect(words[5]).toEqual({ start: 3.14, end: 3.82, text: 'ask' });
    // "," (t_dtw 8.46, in the pause) joins "you" without stretching it.
    expect(words[13]).toEqual({ start: 7.08, end: 7.28, text: 'you,' });
    for (let i = 1; i < words.length; i++) expect(words[i]!.start).toBeGreaterThanOrEqual(words[i - 1]!.end);
  });

  it('keeps token timestamps when any text token lacks a DTW time (t_dtw -1: -dtw not given)', () => {
    const plain = parseWhisperJson(fixture('whisper-full-jfk.en.ojf.txt'));
    expect(plain.words[0]).toEqual({ start: 0, end: 0.32, text: 'And' });
    const doc = JSON.parse(fixture('whisper-full-jfk.dtw.ojf.txt'));
    doc.transcription[0].tokens.find((t: { text: string }) => t.text === ' so').t_dtw = -1;
    const mixed = parseWhisperJson(doc);
    expect(mixed.words[0]).toEqual({ start: 0.32, end: 0.4, text: 'And' });
  });

  it('reports the detected language and keeps multi-byte text and escaped quotes', () => {
    const result = parseWhisperJson(fixture('whisper-full-two-segments.de.ojf.txt'));

    expect(result.language).toBe('de');
    expect(result.words.map((w) => w.text)).toEqual([
      'Guten',
      'Morgen,',
      'München!',
      'Er',
      'sagte',
      '"Hallo".',
      'Straße',
    ]);
    expect(result.words[2]).toEqual({ start: 0.9, end: 1.74, text: 'München!' });
    expect(result.text).toBe('Guten Morgen, München! Er sagte "Hallo". Straße');
  });

  it('returns no words and empty text for an empty transcription', () => {
    expect(parseWhisperJson(fixture('whisper-full-empty.ojf.txt'))).toEqual({
      language: 'en',
      words: [],
      segments: [],
      text: '',
    });
  });

  it('accepts an already parsed object', () => {
    const doc = JSON.parse(fixture('whisper-full-jfk.en.ojf.txt')) as unknown;
    expect(parseWhisperJson(doc).words).toHaveLength(22);
  });

  it('falls back to the segment text when the file has no tokens (plain -oj)', () => {
    const doc = {
      result: { language: 'en' },
      transcription: [{ offsets: { from: 0, to: 1500 }, text: ' Hello there.' }],
    };
    expect(parseWhisperJson(doc)).toEqual({
      language: 'en',
      words: [],
      segments: [{ start: 0, end: 1.5, text: 'Hello there.', tokens: [], avgLogprob: null }],
      text: 'Hello there.',
    });
  });

  it('times an untimed token from where the previous one ended', () => {
    const doc = {
      result: { language: 'en' },
      transcription: [
        {
          offsets: { from: 1000, to: 2000 },
          text: ' a b',
          tokens: [{ text: ' a', offsets: { from: 1000, to: 1300 } }, { text: ' b' }],
        },
      ],
    };
    expect(parseWhisperJson(doc).words).toEqual([
      { start: 1, end: 1.3, text: 'a' },
      { start: 1.3, end: 1.3, text: 'b' },
    ]);
  });

  it('drops <|...|> style special tokens too', () => {
    const doc = {
      result: { language: 'en' },
      transcription: [
        {
          offsets: { from: 0, to: 500 },
          text: ' hi',
          tokens: [
            { text: ' hi', offsets: { from: 0, to: 400 } },
            { text: '<|endoftext|>', offsets: { from: 400, to: 500 } },
          ],
        },
      ],
    };
    expect(parseWhisperJson(doc).words).toEqual([{ start: 0, end: 0.4, text: 'hi' }]);
  });

  it('repairs raw control characters in strings and bare nan/inf the writer can emit', () => {
    const raw = fixture('whisper-full-jfk.en.ojf.txt')
      .replace('" fellow"', '" fel\tlow"')
      .replace('"p": 0.999361', '"p": -nan');
    expect(() => JSON.parse(raw)).toThrow();
    const result = parseWhisperJson(raw);
    expect(result.words[3]).toEqual({ start: 0.76, end: 1.13, text: 'fel low' });
  });

  it('leaves escapes and nan inside strings alone when repairing', () => {
    expect(repairJson('{"a": "x\\"nan\u0001", "b": nan, "c": -inf}')).toBe(
      '{"a": "x\\"nan\\u0001", "b": null, "c": null}',
    );
  });

  it.each([
    ['not JSON', '{"result": '],
    ['no language', { transcription: [] }],
    ['no transcription', { result: { language: 'en' } }],
    ['a malformed segment', { result: { language: 'en' }, transcription: [{ text: 'x' }] }],
  ])('rejects %s', (_name, input) => {
    expect(() => parseWhisperJson(input)).toThrow(WhisperOutputError);
  });
});

describe('non-speech marks', () => {
  const token = (text: string, from: number, to: number) => ({ text, offsets: { from, to } });
  const doc = (tokens: ReturnType<typeof token>[], text: string) => ({
    result: { language: 'en' },
    transcription: [{ text, offsets: { from: 0, to: 3000 }, tokens: [token('[_BEG_]', 0, 0), ...tokens] }],
  });
  /** Parses one segment of these tokens ([text, from ms, to ms]); its text is theirs joined. */
  const parse = (...tokens: [string, number, number][]) =>
    parseWhisperJson(
      doc(
        tokens.map((t) => token(...t)),
        tokens.map(([text]) => text).join(''),
      ),
    );

  it('drops `>>` speaker-turn markers from words, segments and text', () => {
    const result = parse([' >>', 0, 100], [' Hello', 100, 500], [' >>', 500, 600], [' there.', 600, 1000]);
    expect(result.words).toEqual([
      { start: 0.1, end: 0.5, text: 'Hello' },
      { start: 0.6, end: 1, text: 'there.' },
    ]);
    expect(result.segments).toEqual([
      { start: 0, end: 3, text: 'Hello there.', tokens: [], avgLogprob: null },
    ]);
    expect(result.text).toBe('Hello there.');
  });

  it('leaves no word empty or only punctuation: lone punctuation joins the word before it', () => {
    const result = parse(
      [' -', 0, 50],
      [' well', 50, 400],
      [' -', 400, 450],
      [' ♪', 450, 500],
      [' >>yes', 500, 900],
      [' +', 900, 950],
    );
    expect(result.words).toEqual([
      { start: 0.05, end: 0.45, text: 'well-' },
      { start: 0.5, end: 0.9, text: 'yes' },
    ]);
    expect(result.words.every((w) => /[\p{L}\p{N}]/u.test(w.text))).toBe(true);
  });

  it('drops a segment that held only non-speech', () => {
    const result = parse([' ♪', 0, 100], [' >>', 100, 200]);
    expect(result).toEqual({ language: 'en', words: [], segments: [], text: '' });
  });
});
