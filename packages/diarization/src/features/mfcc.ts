import { PowerSpectrum } from './fft';

/** Row-major frames x dims. Frame i covers [i * hop, i * hop + window) seconds. */
export interface FeatureMatrix {
  frames: number;
  dims: number;
  data: Float32Array;
  hopSeconds: number;
}

export interface MfccOptions {
  /** Default 0.025 s. */
  windowSeconds?: number;
  /** Default 0.01 s. */
  hopSeconds?: number;
  /** Mel bands. Default 40. */
  mels?: number;
  /** Cepstra kept, c0 included. Default 20. */
  ceps?: number;
  /** Default 20 Hz. */
  lowHz?: number;
  /** Default 7600 Hz (below Nyquist of 16 kHz audio, where resampling filters roll off). */
  highHz?: number;
}

const hzToMel = (hz: number): number => 1127 * Math.log(1 + hz / 700);
const melToHz = (mel: number): number => 700 * (Math.exp(mel / 1127) - 1);

/** Triangular filters evenly spaced on the mel scale, as rows over FFT bins. */
export function melFilterbank(
  mels: number,
  fftSize: number,
  sampleRate: number,
  lowHz: number,
  highHz: number,
): Float64Array[] {
  const bins = fftSize / 2 + 1;
  const lo = hzToMel(lowHz);
  const hi = hzToMel(highHz);
  const centers = Array.from({ length: mels + 2 }, (_, i) => melToHz(lo + ((hi - lo) * i) / (mels + 1)));
  return Array.from({ length: mels }, (_, m) => {
    const row = new Float64Array(bins);
    const [left, mid, right] = [centers[m]!, centers[m + 1]!, centers[m + 2]!];
    for (let k = 0; k < bins; k++) {
      const hz = (k * sampleRate) / fftSize;
      if (hz > left && hz < right)
        row[k] = hz <= mid ? (hz - left) / (mid - left) : (right - hz) / (right - mid);
    }
    return row;
  });
}

/** MFCCs with pre-emphasis, a Hamming window, log mel energies and an orthonormal DCT-II. */
export function mfcc(samples: Float32Array, sampleRate: number, options: MfccOptions = {}): FeatureMatrix {
  const win = Math.round((options.windowSeconds ?? 0.025) * sampleRate);
  const hop = Math.round((options.hopSeconds ?? 0.01) * sampleRate);
  const mels = options.mels ?? 40;
  const ceps = options.ceps ?? 20;
  const fftSize = 2 ** Math.ceil(Math.log2(win));
  const fft = new PowerSpectrum(fftSize);
  const filters = melFilterbank(
    mels,
    fftSize,
    sampleRate,
    options.lowHz ?? 20,
    Math.min(options.highHz ?? 7600, sampleRate / 2),
  );
  // Only the non-zero span of each filter is visited: ~6x fewer multiplications than full rows.
  const spans = filters.map((row) => {
    const first = row.findIndex((v) => v > 0);
    let last = row.length - 1;
    while (last > first && row[last] === 0) last--;
    return [Math.max(first, 0), last] as const;
  });
  const window = Float64Array.from(
    { length: win },
    (_, i) => 0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (win - 1)),
  );
  const dct = Array.from({ length: ceps }, (_, c) =>
    Float64Array.from(
      { length: mels },
      (_, m) => Math.cos((Math.PI * c * (m + 0.5)) / mels) * Math.sqrt((c === 0 ? 1 : 2) / mels),
    ),
  );

  const frames = samples.length < win ? 0 : 1 + Math.floor((samples.length - win) / hop);
  const data = new Float32Array(frames * ceps);
  const frame = new Float64Array(win);
  const power = new Float64Array(fft.bins);
  const logMel = new Float64Array(mels);
  for (let f = 0; f < frames; f++) {
    const at = f * hop;
    for (let i = 0; i < win; i++) {
      const prev = at + i > 0 ? samples[at + i - 1]! : 0;
      frame[i] = (samples[at + i]! - 0.97 * prev) * window[i]!;
    }
    fft.compute(frame, power);
    for (let m = 0; m < mels; m++) {
      const [first, last] = spans[m]!;
      const row = filters[m]!;
      let e = 0;
      for (let k = first; k <= last; k++) e += row[k]! * power[k]!;
      logMel[m] = Math.log(e + 1e-10);
    }
    for (let c = 0; c < ceps; c++) {
      const basis = dct[c]!;
      let v = 0;
      for (let m = 0; m < mels; m++) v += basis[m]! * logMel[m]!;
      data[f * ceps + c] = v;
    }
  }
  return { frames, dims: ceps, data, hopSeconds: hop / sampleRate };
}

/** First-order regression deltas over +-`span` frames (HTK formula), edges clamped. */
export function deltas(features: FeatureMatrix, span = 2): FeatureMatrix {
  const { frames, dims, data } = features;
  const out = new Float32Array(frames * dims);
  let norm = 0;
  for (let n = 1; n <= span; n++) norm += 2 * n * n;
  for (let f = 0; f < frames; f++) {
    for (let d = 0; d < dims; d++) {
      let v = 0;
      for (let n = 1; n <= span; n++) {
        const next = Math.min(frames - 1, f + n);
        const prev = Math.max(0, f - n);
        v += n * (data[next * dims + d]! - data[prev * dims + d]!);
      }
      out[f * dims + d] = v / norm;
    }
  }
  return { ...features, data: out };
}
