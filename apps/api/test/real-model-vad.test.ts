import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { testAudio, testEngine } from '@hark/testing';
import { scratchFolders, stackTest } from '@hark/testing/jest';
import { transcribeFile } from './helpers';

// WHISPER_VAD=on through built API and worker processes with the real base model: the worker
// decodes only the speech Silero VAD finds, every word keeps its time in the original audio,
// and the whole file is billed. The audio: 10 s of silence, jfk.wav, 10 s of silence, jfk.wav.
jest.setTimeout(180_000);

const scratch = scratchFolders();
const stack = stackTest({
  name: 'real-model-vad',
  env: () => ({
    WHISPER_MODEL: testEngine.baseModel,
    WHISPER_THREADS: '2',
    WHISPER_VAD: 'on',
    WHISPER_VAD_MODEL: testEngine.vadModel,
  }),
  workerReadyMs: 60_000,
  setupMs: 120_000,
});

/** jfk.wav speaks from about 0.3 s to 10.6 s; here from 10 s and again from 31 s. */
const SPEECH = [
  [10.3, 20.6],
  [31.3, 41.6],
] as const;
const fromSpeech = (t: number) => Math.min(...SPEECH.map(([a, b]) => (t < a ? a - t : t > b ? t - b : 0)));

describe('WHISPER_VAD=on with the real base model', () => {
  it('the two takes transcribed, every word inside the speech, all 42 s billed', async () => {
    expect(stack.workerReady).toMatchObject({ vad: true });
    const wav = path.join(await scratch('hark-vad-'), 'silence-jfk-silence-jfk.wav');
    const silence = ['-f', 'lavfi', '-i', 'anullsrc=r=16000:cl=mono:d=10'];
    execFileSync('ffmpeg', [
      ...['-v', 'error', '-y', ...silence, '-i', testAudio.jfkWav, ...silence, '-i', testAudio.jfkWav],
      ...['-filter_complex', '[0:a][1:a][2:a][3:a]concat=n=4:v=0:a=1', '-ar', '16000', '-ac', '1', wav],
    ]);
    const t = await transcribeFile(stack, wav);
    expect(t).toMatchObject({ status: 'done', error: null, language: 'en', durationSeconds: 42 }); // billed for all of it, silence included
    const text = (t.text as string).toLowerCase();
    expect(text.match(/fellow/g)).toHaveLength(2);
    expect(text.match(/for your country/g)).toHaveLength(2);
    const words = t.words as { start: number; end: number; text: string }[];
    // Words are timed by DTW (the default): a word after a pause starts up to twice the median
    // word length before it ends, so the first of a take may begin about half a second early
    // ("And" at 9.76 s); none lies out in the 10 s silences.
    for (const w of words) {
      if (fromSpeech(w.start) > 0.6 || fromSpeech(w.end) > 0.5)
        throw new Error(`"${w.text}" at ${w.start}-${w.end} s lies in the silence`);
    }
    expect(words[0]!.start).toBeGreaterThan(9.7);
  });
});
