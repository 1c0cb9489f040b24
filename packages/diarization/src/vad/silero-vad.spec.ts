import { toRegions } from './silero-vad';

const opts = { modelPath: '', threshold: 0.5, minSpeech: 0.25, minSilence: 0.2, pad: 0.03 };
const FRAME = 0.032;
/** Probabilities from a pattern: each char is one frame, '#' speech (0.9), '-' doubt (0.4), '.' silence. */
const probs = (pattern: string) =>
  Float32Array.from(pattern, (c) => (c === '#' ? 0.9 : c === '-' ? 0.4 : 0.05));

describe('toRegions', () => {
  it('finds a region and pads it', () => {
    const r = toRegions(probs('.....##########.....'), FRAME, 20 * FRAME, opts);
    expect(r).toHaveLength(1);
    expect(r[0]!.start).toBeCloseTo(5 * FRAME - 0.03);
    expect(r[0]!.end).toBeCloseTo(15 * FRAME + 0.03);
  });

  it('bridges silences shorter than minSilence and stays in on doubtful frames', () => {
    // 4 silent frames = 0.128 s < 0.2 s: one region. Frames at 0.4 are above the exit threshold (0.35).
    expect(toRegions(probs('##########....####------####'), FRAME, 28 * FRAME, opts)).toHaveLength(1);
  });

  it('splits on long silences and drops blips shorter than minSpeech', () => {
    const r = toRegions(probs('##########..........###..........##########'), FRAME, 44 * FRAME, opts);
    expect(r).toHaveLength(2);
  });

  it('never pads across a neighbour or past the audio', () => {
    const r = toRegions(probs('##########........##########'), FRAME, 28 * FRAME, { ...opts, pad: 1 });
    expect(r[0]!.start).toBe(0);
    expect(r[0]!.end).toBeCloseTo(r[1]!.start);
    expect(r[1]!.end).toBeCloseTo(28 * FRAME);
  });
});
