import { HIGH_VOICE, LOW_VOICE, synthesize } from '../testing/synthetic-voice';
import type { Segment } from '../timeline';
import { MixtureOverlapDetector } from './mixture-overlap-detector';

// A talks, B answers, A talks again and B joins in for the last 2 seconds.
const audio = synthesize([
  { voice: LOW_VOICE, start: 0.5, end: 5.5 },
  { voice: HIGH_VOICE, start: 6, end: 11 },
  { voice: LOW_VOICE, start: 11.5, end: 16.5 },
  { voice: HIGH_VOICE, start: 14.5, end: 16.5 },
]);
const seg = (start: number, end: number, ...speakers: number[]): Segment<number> => ({
  start,
  end,
  speakers,
});
const timeline = [seg(0.5, 5.5, 0), seg(6, 11, 1), seg(11.5, 16.5, 0)];

describe('MixtureOverlapDetector', () => {
  it('splits the overlapped stretch out of the turn, naming both speakers', async () => {
    const out = await new MixtureOverlapDetector().detect(audio, timeline);
    const both = out.filter((s) => s.speakers.length === 2);
    expect(both).toHaveLength(1);
    expect(both[0]!.speakers).toEqual([0, 1]);
    expect(Math.abs(both[0]!.start - 14.5)).toBeLessThan(0.5);
    expect(both[0]!.end).toBeCloseTo(16.5);
    // The clean turns are untouched.
    expect(out.slice(0, 2)).toEqual(timeline.slice(0, 2));
  });

  it('leaves a single-speaker timeline alone', async () => {
    const single = [seg(0.5, 5.5, 0), seg(11.5, 16.5, 0)];
    expect(await new MixtureOverlapDetector().detect(audio, single)).toEqual(single);
  });

  it('does not pair turns further apart than maxGap', async () => {
    const out = await new MixtureOverlapDetector({ maxGap: 0.2 }).detect(audio, timeline);
    expect(out).toEqual(timeline);
  });
});
