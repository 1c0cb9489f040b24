import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildUtterances, createDiarizer, type DiarizationResult, labelWords, type Utterance } from '../src';
import { type GeneratedAudio, generateScenario, scriptWords, type TimedTurn } from './fixtures/make-audio';
import { TEST_SCENARIOS } from './fixtures/scenarios';

// The classic pipeline (Silero VAD through onnxruntime-node) on espeak-ng speech generated into a temp
// folder; needs espeak-ng and sox. Script speakers are named A, B, C in order of first turn,
// so the expected diarization labels equal the script's.

jest.setTimeout(60_000);

const diarizer = createDiarizer();
let dir: string;
const audio: Record<string, GeneratedAudio> = {};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hark-diarization-'));
  for (const scenario of TEST_SCENARIOS) audio[scenario.id] = await generateScenario(scenario, dir);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function utterancesOf(file: GeneratedAudio, result: DiarizationResult): Utterance[] {
  return buildUtterances(labelWords(scriptWords(file.turns), result.segments), result.segments);
}

/** With turns that do not overlap, each turn must come back as one utterance of its speaker. */
function expectTurnsRecovered(file: GeneratedAudio, utterances: Utterance[]): void {
  expect(utterances.map((u) => u.speaker)).toEqual(mergeSameSpeaker(file.turns).map((t) => t.speaker));
  mergeSameSpeaker(file.turns).forEach((turn, i) => {
    expect(Math.abs(utterances[i]!.start - turn.start)).toBeLessThan(0.5);
    expect(Math.abs(utterances[i]!.end - turn.end)).toBeLessThan(0.5);
    expect(utterances[i]!.overlap).toBe(false);
  });
}

function mergeSameSpeaker(turns: TimedTurn[]): TimedTurn[] {
  const out: TimedTurn[] = [];
  for (const t of turns) {
    const last = out[out.length - 1];
    if (last && last.speaker === t.speaker) last.end = t.end;
    else out.push({ ...t });
  }
  return out;
}

describe('diarize on generated speech', () => {
  it('two speakers taking turns: estimates 2 and recovers every turn', async () => {
    const file = audio['two-speakers']!;
    const result = await diarizer.diarize(file.wavPath, { speakers: true });
    expect(result.speakerCount).toBe(2);
    expect(result.segments.every((s) => s.speakers.length === 1)).toBe(true);
    expectTurnsRecovered(file, utterancesOf(file, result));
  });

  it('three speakers: estimates 3 and recovers every turn', async () => {
    const file = audio['three-speakers']!;
    const result = await diarizer.diarize(file.wavPath, { speakers: true });
    expect(result.speakerCount).toBe(3);
    expectTurnsRecovered(file, utterancesOf(file, result));
  });

  it('honours an exact count and a range', async () => {
    const { wavPath } = audio['three-speakers']!;
    const count = async (speakers: Parameters<typeof diarizer.diarize>[1]['speakers']) =>
      (await diarizer.diarize(wavPath, { speakers })).speakerCount;
    expect(await count(3)).toBe(3);
    expect(await count(2)).toBe(2);
    expect(await count(1)).toBe(1);
    expect(await count({ min: 1, max: 2 })).toBe(2);
    expect(await count({ min: 4, max: 6 })).toBe(4);
    expect(await count({ min: 2, max: 5 })).toBe(3);
  });

  it('an exact count that matches gives the same turns as the estimate', async () => {
    const file = audio['two-speakers']!;
    expectTurnsRecovered(file, utterancesOf(file, await diarizer.diarize(file.wavPath, { speakers: 2 })));
  });

  it('overlapping voices: marks an overlap segment and flags the utterances around it', async () => {
    const file = audio['overlap']!;
    const result = await diarizer.diarize(file.wavPath, { speakers: true });
    expect(result.speakerCount).toBe(2);
    // The script has A and B talking together between these times.
    const [b, a] = [file.turns[1]!, file.turns[2]!];
    const overlap = { start: a.start, end: b.end };
    const both = result.segments.filter((s) => s.speakers.length === 2);
    expect(both.length).toBeGreaterThan(0);
    for (const s of both) {
      expect(s.speakers).toEqual(['A', 'B']);
      expect(s.start).toBeGreaterThan(overlap.start - 0.5);
      expect(s.end).toBeLessThan(overlap.end + 0.5);
    }

    const utterances = utterancesOf(file, result);
    const intersects = (u: Utterance) => u.start < overlap.end && u.end > overlap.start;
    expect(utterances.filter(intersects).some((u) => u.overlap)).toBe(true);
    // Turns well away from the overlap are clean.
    const first = utterances[0]!;
    const last = utterances[utterances.length - 1]!;
    expect([first.speaker, first.overlap]).toEqual(['A', false]);
    expect([last.speaker, last.overlap]).toEqual(['A', false]);
    expect(utterances.find((u) => Math.abs(u.start - file.turns[3]!.start) < 0.5)).toMatchObject({
      speaker: 'B',
      overlap: false,
    });
  });

  it('stops on abort, mid-VAD, with the signal reason, and keeps working afterwards', async () => {
    const file = audio['three-speakers']!;
    const controller = new AbortController();
    const reason = new Error('transcript canceled');
    const run = diarizer.diarize(file.wavPath, { speakers: true, signal: controller.signal });
    setTimeout(() => controller.abort(reason), 20);
    await expect(run).rejects.toBe(reason);
    expect((await diarizer.diarize(file.wavPath, { speakers: 3 })).speakerCount).toBe(3);
  });

  it('finds nobody in silence', async () => {
    const silence = { samples: new Float32Array(16000 * 3), sampleRate: 16000 };
    expect(await diarizer.diarizeAudio(silence, { speakers: true })).toEqual({
      segments: [],
      speakerCount: 0,
    });
  });
});
