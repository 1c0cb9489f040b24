import { DEFAULT_VAD, WhisperEngine, dtwPreset, type TimedWord } from '../src';
import { ensureVadModel, ensureWhisperBuilt, ffmpeg, lavfi, scratchFolder, testEnv } from './media-test-env';

// WHISPER_VAD=on with the real base model: only the speech Silero finds is decoded, and every
// word is timed in the original audio (segments by upstream whisper.cpp, tokens and DTW times by
// scripts/whisper-patches/0005). The audio: 10 s of silence, jfk.wav (11 s), 10 s of silence,
// the first 12 s of speech-60s.wav. (Two different passages: the same one twice in the joined
// audio gives the alignment heads two places to attend to for each word, and DTW loses its way.)
jest.setTimeout(180_000);

/** jfk.wav speaks from about 0.3 s to 10.6 s, here from 10 s; speech-60s.wav from 0.9 s, here from 31 s. */
const SPEECH = [
  [10.3, 20.6],
  [31.0, 43.0],
] as const;
const plain = (words: TimedWord[]) =>
  words
    .map((w) => w.text)
    .join(' ')
    .toLowerCase()
    .replace(/[^a-z ]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
/** How far a time lies outside the speech (0 inside it). */
const fromSpeech = (t: number) => Math.min(...SPEECH.map(([a, b]) => (t < a ? a - t : t > b ? t - b : 0)));

/** Each passage's words on its side of the long pause, in order, none in the silences. */
function expectBothPassages(words: TimedWord[]) {
  const first = plain(words.filter((w) => w.end < 25));
  const second = plain(words.filter((w) => w.end >= 25));
  expect(first).toMatch(/^and so my fellow .* can do for your country$/);
  expect(second).toMatch(/^and says how do i get to dublin /);
  for (const [i, w] of words.entries()) {
    if (i > 0) expect(w.start).toBeGreaterThanOrEqual(words[i - 1]!.start);
    if (fromSpeech(w.start) > 0.5 || fromSpeech(w.end) > 0.5)
      throw new Error(`"${w.text}" at ${w.start}-${w.end} s lies in the silence`);
  }
}

describe('WhisperEngine with VAD (real whisper-cli, base model, Silero)', () => {
  const { file } = scratchFolder();
  const wav = file('silence-jfk-silence-speech.wav');
  let binaryPath = '';
  let vadModel = '';
  const engine = (vad: boolean, preset: string | null = null) =>
    new WhisperEngine({
      binaryPath,
      modelPath: testEnv.baseModel,
      threads: 2,
      modelName: 'whisper-base',
      dtwPreset: preset,
      vad: vad ? { modelPath: vadModel, ...DEFAULT_VAD } : null,
    });

  beforeAll(() => {
    binaryPath = ensureWhisperBuilt();
    vadModel = ensureVadModel();
    const silence = lavfi('anullsrc=r=16000:cl=mono:d=10');
    ffmpeg(
      silence,
      ['-i', testEnv.jfkWav],
      silence,
      ['-t', '12', '-i', testEnv.speech60Wav],
      ['-filter_complex', '[0:a][1:a][2:a][3:a]concat=n=4:v=0:a=1', '-ar', '16000', '-ac', '1'],
      ['-c:a', 'pcm_s16le', wav],
    );
  }, 15 * 60_000);

  it('token times: every word inside the speech, none in the silences; without VAD the first word starts in the silence', async () => {
    const withVad = await engine(true).transcribe({ wavPath: wav, language: 'en' });
    expectBothPassages(withVad.words);
    expect(withVad.words[0]!.start).toBeGreaterThan(9.5);
    expect(withVad.segments[0]!.start).toBeGreaterThan(9.5);
    // The same file decoded whole: the first window's token times spread over its silence.
    const whole = await engine(false).transcribe({ wavPath: wav, language: 'en' });
    expect(whole.words[0]!.start).toBeLessThan(5);
  });

  it('DTW times: in the original audio too, as close to the speech as without VAD', async () => {
    const preset = await dtwPreset(testEnv.baseModel);
    expect(preset).toBe('base');
    const dtw = (vad: boolean) =>
      engine(vad, preset).transcribe({ wavPath: wav, language: 'en', wordTimestamps: 'dtw' });
    const [withVad, whole] = [await dtw(true), await dtw(false)];
    expectBothPassages(withVad.words);
    // Word for word, where both runs wrote the same words: the ends agree, nearly all within
    // 0.25 s (DTW's own spread between two decodes), none by 0.75 s or more.
    const ends = new Map(whole.words.map((w, i) => [`${i}:${plain([w])}`, w.end]));
    const gaps = withVad.words.flatMap((w, i) => {
      const end = ends.get(`${i}:${plain([w])}`);
      return end === undefined ? [] : [Math.abs(w.end - end)];
    });
    const compared = gaps.length;
    expect(Math.max(...gaps)).toBeLessThan(0.75);
    expect(gaps.filter((g) => g < 0.25).length).toBeGreaterThanOrEqual(0.9 * compared);
    expect(compared).toBeGreaterThan(20);
  });
});
