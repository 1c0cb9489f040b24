import { readFileSync } from 'node:fs';
import type { TranscribeInput, WhisperResult } from '@hark/media';
import type { Engine, SpeakerDiarizer } from '../src/pipeline';
import { testEnv, workerTest } from './worker-test-env';

// The speech gate of transcripts without speakers (HARK_SPEECH_GATE), through the worker with an
// engine that writes one word in the speech and one in the silence after it, and a diarizer whose
// speech pass says where the speech is (or fails).
jest.setTimeout(60_000);

const h = workerTest();
const jfk = readFileSync(testEnv.jfkWav);

const engine: Engine = {
  modelName: 'whisper-test',
  async transcribe(_input: TranscribeInput): Promise<WhisperResult> {
    return {
      language: 'en',
      text: 'country again',
      words: [
        { start: 1, end: 1.5, text: 'country' },
        { start: 9.6, end: 10.2, text: 'again' },
      ],
      segments: [{ start: 0, end: 11, text: 'country again', tokens: [1, 2], avgLogprob: -0.3 }],
    };
  },
};

function diarizer(speech: SpeakerDiarizer['speech']): SpeakerDiarizer {
  return {
    diarize: async () => ({ segments: [], speakerCount: 0 }),
    speech,
  };
}

async function transcribeWith(d: SpeakerDiarizer) {
  const w = await h.startWorker({ engine, diarizer: d });
  try {
    const { id } = await h.submit(jfk);
    await h.enqueue(id);
    return await h.finished(id);
  } finally {
    await w.close();
  }
}

it('words nowhere near the speech the pass hears are left out of a plain transcript', async () => {
  const t = await transcribeWith(diarizer(async () => [{ start: 0.3, end: 8 }]));
  expect(t).toMatchObject({ status: 'done', speakerCount: null });
  expect(t.content).toMatchObject({ text: 'country', diarizationSegments: null });
  expect((t.content!.words as { text: string }[]).map((w) => w.text)).toEqual(['country']);
});

it('a speech pass that fails leaves every word in, and the transcript is done', async () => {
  const t = await transcribeWith(
    diarizer(async () => {
      throw new Error('model file missing');
    }),
  );
  expect(t).toMatchObject({ status: 'done' });
  expect(t.content).toMatchObject({ text: 'country again' });
});

it('HARK_SPEECH_GATE=speakers: plain transcripts are not gated', async () => {
  const speakersOnly = { ...h.config, diarizer: { ...h.config.diarizer, speechGate: 'speakers' as const } };
  const w = await h.startWorker({
    config: speakersOnly,
    engine,
    diarizer: diarizer(async () => [{ start: 0.3, end: 8 }]),
  });
  try {
    const { id } = await h.submit(jfk);
    await h.enqueue(id);
    expect((await h.finished(id)).content).toMatchObject({ text: 'country again' });
  } finally {
    await w.close();
  }
});
