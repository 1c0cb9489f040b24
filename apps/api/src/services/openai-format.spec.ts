import { type FinishedTranscript, compressionRatio, formatTranscription } from './openai-format';

const words = [
  { start: 0.32, end: 0.54, text: 'And', speaker: null },
  { start: 0.54, end: 0.6, text: 'so', speaker: null },
  { start: 0.6, end: 0.7, text: 'my', speaker: null },
  { start: 0.7, end: 1.1, text: 'fellow', speaker: null },
  { start: 1.1, end: 1.9, text: 'Americans.', speaker: null },
  { start: 3.0, end: 3.4, text: 'Ask', speaker: null },
  { start: 3.4, end: 3.9, text: 'not.', speaker: null },
];
const t: FinishedTranscript = {
  text: 'And so my fellow Americans. Ask not.',
  words,
  utterances: [{ text: 'And so my fellow Americans. Ask not.', speaker: null }],
  language: 'en',
  durationSeconds: 4.2345,
  billedSeconds: 5,
  diarized: false,
  engineSegments: null,
};
const base = { task: 'transcribe', granularities: [], temperature: null } as const;

describe('formatTranscription', () => {
  it('json: text and usage', () => {
    expect(formatTranscription(t, { ...base, format: 'json' })).toEqual({
      kind: 'json',
      body: { text: t.text, usage: { type: 'duration', seconds: 5 } },
    });
  });

  it('text, srt and vtt as text', () => {
    expect(formatTranscription(t, { ...base, format: 'text' })).toEqual({
      kind: 'text',
      body: `${t.text}\n`,
    });
    const srt = formatTranscription(t, { ...base, format: 'srt' });
    expect(srt.body).toMatch(
      /^1\n00:00:00,320 --> 00:00:01,900\nAnd so my fellow Americans.\n\n2\n00:00:03,000 --> /,
    );
    const vtt = formatTranscription(t, { ...base, format: 'vtt' });
    expect(vtt.body).toMatch(/^WEBVTT\n\n00:00:00\.320 --> 00:00:01\.900\nAnd so my fellow Americans\.\n/);
  });

  it('verbose_json: segments by default, words when asked, language by name', () => {
    const out = formatTranscription(t, { ...base, format: 'verbose_json', temperature: 0.2 });
    expect(out.body).toEqual({
      task: 'transcribe',
      language: 'english',
      duration: 4.235,
      text: t.text,
      segments: [
        expect.objectContaining({
          id: 0,
          seek: 0,
          start: 0.32,
          end: 1.9,
          text: ' And so my fellow Americans.',
          tokens: [],
          temperature: 0.2,
        }),
        expect.objectContaining({ id: 1, start: 3, end: 3.9, text: ' Ask not.' }),
      ],
      usage: { type: 'duration', seconds: 5 },
    });
    const withWords = formatTranscription(t, { ...base, format: 'verbose_json', granularities: ['word'] })
      .body as Record<string, unknown>;
    expect(withWords.segments).toBeUndefined();
    expect(withWords.words).toEqual(words.map((w) => ({ word: w.text, start: w.start, end: w.end })));
    const translated = formatTranscription(
      { ...t, language: 'de' },
      { ...base, task: 'translate', format: 'verbose_json' },
    );
    expect(translated.body).toMatchObject({ task: 'translate', language: 'english' });
  });

  it("verbose_json: the engine's segments when the worker kept them", () => {
    const engineSegments = [
      { start: 0, end: 3.8, text: 'And so my fellow Americans.', tokens: [50363, 843], avgLogprob: -0.31 },
      { start: 3.8, end: 4.2, text: 'Ask not.', tokens: [1], avgLogprob: null },
    ];
    const out = formatTranscription({ ...t, engineSegments }, { ...base, format: 'verbose_json' });
    expect((out.body as { segments: unknown }).segments).toEqual([
      {
        id: 0,
        seek: 0,
        start: 0,
        end: 3.8,
        text: ' And so my fellow Americans.',
        tokens: [50363, 843],
        temperature: 0,
        avg_logprob: -0.31,
        compression_ratio: expect.any(Number),
        no_speech_prob: 0,
      },
      expect.objectContaining({ id: 1, text: ' Ask not.', tokens: [1], avg_logprob: 0 }),
    ]);
  });

  it('verbose_json: segment and word times end at the end of the audio', () => {
    // speech-60s.wav: the engine's last window runs past the 60.0 s of audio.
    const engineSegments = [
      { start: 50.5, end: 58.2, text: 'And so my fellow Americans.', tokens: [1], avgLogprob: -0.2 },
      { start: 58.2, end: 61.16, text: 'Ask not.', tokens: [2], avgLogprob: -0.3 },
      { start: 60.4, end: 61.5, text: 'Late.', tokens: [3], avgLogprob: -0.3 },
    ];
    const late = [...words.slice(0, 6), { start: 59.8, end: 60.2, text: 'not.', speaker: null }];
    const out = formatTranscription(
      { ...t, words: late, durationSeconds: 60, engineSegments },
      { ...base, format: 'verbose_json', granularities: ['segment', 'word'] },
    ).body as { duration: number; segments: { start: number; end: number }[]; words: { end: number }[] };
    expect(out.duration).toBe(60);
    expect(out.segments.map((s) => [s.start, s.end])).toEqual([
      [50.5, 58.2],
      [58.2, 60],
      [60, 60],
    ]);
    expect(out.words[out.words.length - 1]!.end).toBe(60);
  });

  it('compression ratio as Whisper computes it; 0 for no text', () => {
    expect(compressionRatio('')).toBe(0);
    expect(compressionRatio('ha '.repeat(100))).toBeGreaterThan(10);
  });
});
