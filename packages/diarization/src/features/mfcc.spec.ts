import { PowerSpectrum } from './fft';
import { deltas, melFilterbank, mfcc } from './mfcc';

describe('PowerSpectrum', () => {
  it('puts a sine on its bin with energy (N/2)^2', () => {
    const n = 512;
    const fft = new PowerSpectrum(n);
    const out = new Float64Array(fft.bins);
    fft.compute(
      Float64Array.from({ length: n }, (_, i) => Math.sin((2 * Math.PI * 32 * i) / n)),
      out,
    );
    const peak = out.indexOf(Math.max(...out));
    expect(peak).toBe(32);
    expect(out[32]).toBeCloseTo((n / 2) ** 2, 3);
    expect(out[10]).toBeLessThan(1e-9);
  });

  it('rejects sizes that are not powers of two', () => {
    expect(() => new PowerSpectrum(500)).toThrow(/power of two/);
  });
});

describe('melFilterbank', () => {
  it('builds triangles that peak at 1 and cover the band in order', () => {
    const filters = melFilterbank(40, 512, 16000, 20, 7600);
    expect(filters).toHaveLength(40);
    const peaks = filters.map((row) => row.indexOf(Math.max(...row)));
    expect(peaks).toEqual([...peaks].sort((a, b) => a - b));
    for (const row of filters) expect(Math.max(...row)).toBeLessThanOrEqual(1);
  });
});

describe('mfcc', () => {
  it('gives one frame per 10 ms and separates two tones', () => {
    const sr = 16000;
    const tone = (hz: number) =>
      Float32Array.from({ length: sr }, (_, i) => 0.5 * Math.sin((2 * Math.PI * hz * i) / sr));
    const low = mfcc(tone(200), sr);
    const high = mfcc(tone(2000), sr);
    expect(low.frames).toBe(98);
    expect(low.dims).toBe(20);
    const c1 = (m: typeof low) => m.data[10 * m.dims + 1]!;
    // A low tone tilts the log-mel spectrum down: c1 is larger than for a high tone.
    expect(c1(low)).toBeGreaterThan(c1(high));
  });

  it('is empty for audio shorter than one window', () => {
    expect(mfcc(new Float32Array(100), 16000).frames).toBe(0);
  });

  it('computes regression deltas (a ramp has a constant slope)', () => {
    const ramp = {
      frames: 10,
      dims: 1,
      data: Float32Array.from({ length: 10 }, (_, i) => i),
      hopSeconds: 0.01,
    };
    const d = deltas(ramp);
    expect(d.data[5]).toBeCloseTo(1);
    expect(d.data[0]).toBeLessThan(1); // edges clamp
  });
});
