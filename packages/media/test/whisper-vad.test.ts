import { DEFAULT_VAD, WhisperEngine, dtwPreset, type TimedWord } from '../src';
import { ensureVadModel, ensureWhisperBuilt, ffmpeg, lavfi, scratchFolder, testEnv } from './media-test-env';

// WHISPER_VAD=on with the real base model: only the speech Silero finds is decoded, and every
// word is timed in the original audio (segments by upstream whisper.cpp, tokens and DTW times by
// scripts/whisper-patches/0005). The audio: 10 s of silence, jfk.wav, 10 s of silence, jfk.wav.
jest.setTimeout(180_000);

/** Both takes heard (the base model's spelling of one or two words varies with the decoding). */
const bothTakes = (text: string) => {
  expect(text.match(/fellow/g)).toHaveLength(2);
  expect(text.match(/can do for your country/g)).toHaveLength(2);
};
/** jfk.wav speaks from about 0.3 s to 10.6 s; here it starts at 10 s and again at 31 s. */
const SPEECH = [
  [10.3, 20.6],
  [31.3, 41.6],
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

describe('WhisperEngine with VAD (real whisper-cli, base model, Silero)', () => {
  const { file } = scratchFolder();
  const wav = file('silence-jfk-silence-jfk.wav');
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
      '-i',
      testEnv.jfkWav,
      silence,
      '-i',
      testEnv.jfkWav,
      '-filter_complex',
      '[0:a][1:a][2:a][3:a]concat=n=4:v=0:a=1',
      '-ar',
      '16000',
      '-ac',
      '1',
      '-c:a',
      'pcm_s16le',
      wav,
    );
  }, 15 * 60_000);

  it('token times: every word inside the speech, none in the silences; without VAD the first word starts in the silence', async () => {
    const withVad = await engine(true).transcribe({ wavPath: wav, language: 'en' });
    bothTakes(plain(withVad.words));
    for (const w of withVad.words) {
      expect(fromSpeech(w.start)).toBeLessThanOrEqual(0.5);
      expect(fromSpeech(w.end)).toBeLessThanOrEqual(0.5);
    }
    expect(withVad.segments[0]!.start).toBeGreaterThan(9.5);
    // The same file decoded whole: the first window's token times spread over its silence.
    const whole = await engine(false).transcribe({ wavPath: wav, language: 'en' });
    expect(whole.words[0]!.start).toBeLessThan(5);
  });

  it('DTW times: in the original audio too, the words of each take inside it', async () => {
    const preset = await dtwPreset(testEnv.baseModel);
    expect(preset).toBe('base');
    const withVad = await engine(true, preset).transcribe({
      wavPath: wav,
      language: 'en',
      wordTimestamps: 'dtw',
    });
    bothTakes(plain(withVad.words));
    const n = withVad.words.length / 2;
    for (const [i, w] of withVad.words.entries()) {
      if (i > 0) expect(w.start).toBeGreaterThanOrEqual(withVad.words[i - 1]!.end - 0.001);
      // A word right after a cut can take the end of the speech before it (DTW over the joined
      // audio; README, "VAD"): every word is within the speech or at its edge, none mid-silence.
      expect(fromSpeech(w.end)).toBeLessThanOrEqual(0.5);
      if (i > 0 && i !== n) expect(w.end).toBeGreaterThan(SPEECH[i < n ? 0 : 1][0]);
    }
    expect(withVad.words[withVad.words.length - 1]!.end).toBeGreaterThan(40.5);
  });
});
