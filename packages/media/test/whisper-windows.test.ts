import { WhisperEngine, dtwPreset, type WhisperResult } from '../src';
import { ensureWhisperBuilt, ffmpeg, scratchFolder, testEnv } from './media-test-env';

// A file longer than one 30 s window, with the worker's decoding (greedy, fitted audio context,
// flash attention, DTW word times) and the real base model: its last window is shorter than the
// one before, so it encodes fewer positions (scripts/whisper-patches/0002). With flash attention
// the encoder's self-attention and the decoder's cross-attention read their K/V padded to a
// multiple of 256 positions, unmasked; before scripts/whisper-patches/0007 zeroed that padding
// before each window, the positions after this window's audio still held the first window's keys
// and values, and the last window wrote "in his own book" where the speaker says "in his book".
// Two transcriptions of 38 s: about two minutes each on a shared 2-core machine.
jest.setTimeout(600_000);

/** Lower case, letters and spaces only: the words, not their punctuation. */
const plain = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z ]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
/** The text of the segments that start in [from, to) seconds. */
const textIn = (result: WhisperResult, from: number, to = Infinity) =>
  plain(
    result.segments
      .filter((s) => s.start >= from && s.start < to)
      .map((s) => s.text)
      .join(' '),
  );

describe('WhisperEngine on a file whose last window is shorter (real whisper-cli, base model)', () => {
  const { file } = scratchFolder();
  const wav = file('speech-38s.wav');
  let binaryPath = '';
  let preset: string | null = null;
  const engine = (audioContextMargin?: number) =>
    new WhisperEngine({
      binaryPath,
      modelPath: testEnv.baseModel,
      threads: 2,
      modelName: 'whisper-base',
      dtwPreset: preset,
      ...(audioContextMargin === undefined ? {} : { decoding: { transcribe: { audioContextMargin } } }),
    });

  beforeAll(async () => {
    binaryPath = ensureWhisperBuilt();
    preset = await dtwPreset(testEnv.baseModel);
    // The first 38 s of speech-60s.wav: a whole 30 s window, then one of 8 s (encoded as 8 s
    // plus the margin, 1074 of 1500 positions).
    ffmpeg(['-t', '38', '-i', testEnv.speech60Wav], ['-ar', '16000', '-ac', '1', '-c:a', 'pcm_s16le', wav]);
  }, 15 * 60_000);

  it("the last window reads its own audio: the speaker's words, as whole windows give them", async () => {
    const fitted = await engine().transcribe({ wavPath: wav, language: 'en', wordTimestamps: 'dtw' });
    // The second window starts where the first one's last segment ended (29.32 s).
    const spoken =
      'and this spills over into normative arguments made by other scholars thomas piketty in his book';
    expect(textIn(fitted, 29)).toBe(spoken);
    // Whole windows (no fitted context, nothing padded after this audio but the model's own 36
    // positions) agree with it.
    const whole = await engine(0).transcribe({ wavPath: wav, language: 'en', wordTimestamps: 'dtw' });
    expect(textIn(whole, 29)).toBe(spoken);
    // The first window is whole in both runs: the same words.
    expect(textIn(fitted, 0, 29)).toBe(textIn(whole, 0, 29));
    expect(textIn(fitted, 0, 29)).toMatch(/^and says how do i get to dublin .* if at all$/);
  });
});
