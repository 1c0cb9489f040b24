/**
 * Power spectrum of real frames with an iterative radix-2 FFT. Twiddles and the bit-reversal
 * permutation are computed once per size, because MFCC extraction calls this ~100 times per
 * second of audio and allocation would dominate.
 */
export class PowerSpectrum {
  readonly bins: number;
  private readonly re: Float64Array;
  private readonly im: Float64Array;
  private readonly cos: Float64Array;
  private readonly sin: Float64Array;
  private readonly reversed: Uint32Array;

  constructor(readonly size: number) {
    if (size < 2 || (size & (size - 1)) !== 0)
      throw new Error(`FFT size must be a power of two, got ${size}`);
    this.bins = size / 2 + 1;
    this.re = new Float64Array(size);
    this.im = new Float64Array(size);
    this.cos = new Float64Array(size / 2);
    this.sin = new Float64Array(size / 2);
    for (let k = 0; k < size / 2; k++) {
      this.cos[k] = Math.cos((-2 * Math.PI * k) / size);
      this.sin[k] = Math.sin((-2 * Math.PI * k) / size);
    }
    const bits = Math.log2(size);
    this.reversed = new Uint32Array(size);
    for (let i = 0; i < size; i++) {
      let r = 0;
      for (let b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
      this.reversed[i] = r;
    }
  }

  /** Writes |X[k]|^2 for k = 0..size/2 into `out`; `frame` shorter than size is zero-padded. */
  compute(frame: ArrayLike<number>, out: Float64Array): void {
    const { size, re, im, cos, sin, reversed } = this;
    for (let i = 0; i < size; i++) {
      const j = reversed[i]!;
      re[j] = i < frame.length ? frame[i]! : 0;
      im[j] = 0;
    }
    for (let len = 2; len <= size; len <<= 1) {
      const half = len >> 1;
      const step = size / len;
      for (let i = 0; i < size; i += len) {
        for (let k = 0; k < half; k++) {
          const wr = cos[k * step]!;
          const wi = sin[k * step]!;
          const a = i + k;
          const b = a + half;
          const tr = re[b]! * wr - im[b]! * wi;
          const ti = re[b]! * wi + im[b]! * wr;
          re[b] = re[a]! - tr;
          im[b] = im[a]! - ti;
          re[a] = re[a]! + tr;
          im[a] = im[a]! + ti;
        }
      }
    }
    for (let k = 0; k < this.bins; k++) out[k] = re[k]! * re[k]! + im[k]! * im[k]!;
  }
}
