import { SEGMENTATION } from '@hark/diarization/segmentation';
import { oracleAssignment } from './oracle-clustering';
import type { Turn } from './rttm';

const { frames: FRAMES, step: STEP, halfField: HALF, local: LOCAL } = SEGMENTATION;
const t = (speaker: string, start: number, end: number): Turn => ({ file: 'f', start, end, speaker });
/** Frame of a window starting at sample 0 whose centre is nearest `seconds`. */
const frameAt = (seconds: number) => Math.round((seconds * 16000 - HALF) / STEP);

/** Activity with local speaker `s` on from `a` to `b` seconds (window at sample 0). */
function activity(...spans: [number, number, number][]): Uint8Array {
  const act = new Uint8Array(FRAMES * LOCAL);
  for (const [s, a, b] of spans) for (let f = frameAt(a); f < frameAt(b); f++) act[f * LOCAL + s] = 1;
  return act;
}

describe('oracleAssignment', () => {
  const names = ['alice', 'bob', 'carol'];

  it('names each local speaker after the reference speaker it shares the most time with', () => {
    const ref = [t('alice', 0, 4), t('bob', 4, 7), t('carol', 7, 10)];
    // Local 0 is mostly carol (7-10, with 1 s of bob); local 2 is alice; local 1 is bob.
    const act = activity([0, 6, 10], [1, 4, 6], [2, 0, 4]);
    expect(Array.from(oracleAssignment(act, 0, ref, names))).toEqual([2, 1, 0]);
  });

  it('keeps local speakers distinct within a window: the second-best takes the next speaker', () => {
    // Both locals sit mostly on alice; the one sharing more with her gets her, the other bob.
    const ref = [t('alice', 0, 6), t('bob', 6, 10)];
    const act = activity([0, 0, 5], [1, 3, 10]);
    expect(Array.from(oracleAssignment(act, 0, ref, names))).toEqual([0, 1, -1]);
  });

  it('leaves a local speaker active under minSeconds unnamed, and times frames from the window start', () => {
    const ref = [t('bob', 20, 30)];
    const act = activity([0, 2, 8], [1, 1, 1.2]);
    // The window starts at 20 s: local 0's frames lie on bob's turn.
    expect(Array.from(oracleAssignment(act, 20 * 16000, ref, names))).toEqual([1, -1, -1]);
    // Where nobody in the reference speaks, a local speaker still gets a name (its time is false
    // alarm whatever its name): one the window does not use, else a voice of its own.
    expect(Array.from(oracleAssignment(act, 0, ref, names))).toEqual([0, -1, -1]);
    // Three local speakers over two people: the third is a voice of its own (index 2 + 2).
    const three = activity([0, 0, 10], [1, 0, 10], [2, 0, 10]);
    const two = [t('alice', 0, 10), t('bob', 0, 10)];
    expect(Array.from(oracleAssignment(three, 0, two, ['alice', 'bob']))).toEqual([0, 1, 4]);
  });

  it('gives a local speaker too short to be named no say in who the others are', () => {
    // Local 1 (0.25 s, over alice) must not take alice from local 0, which shares most with her.
    const ref = [t('alice', 0, 1), t('bob', 1, 1.95)];
    const act = activity([0, 0, 1.95], [1, 0, 0.25]);
    expect(Array.from(oracleAssignment(act, 0, ref, ['alice', 'bob']))).toEqual([0, -1, -1]);
  });
});
