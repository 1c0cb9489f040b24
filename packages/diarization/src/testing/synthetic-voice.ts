import type { Audio } from '../audio/wav-reader';

/** A crude voice: harmonics of `f0` shaped by formant peaks, with syllable-rate amplitude. */
export interface VoiceSpec {
  f0: number;
  formants: number[];
}

export const LOW_VOICE: VoiceSpec = { f0: 110, formants: [700, 1200, 2600] };
export const HIGH_VOICE: VoiceSpec = { f0: 230, formants: [400, 2100, 3100] };
export const THIRD_VOICE: VoiceSpec = { f0: 160, formants: [550, 900, 2300] };

/**
 * Audio for unit tests that need distinct "speakers" without espeak: each turn is a harmonic
 * signal; gaps are silence. Deterministic (the jitter is a fixed function of time).
 */
export function synthesize(
  turns: { voice: VoiceSpec; start: number; end: number }[],
  sampleRate = 16000,
): Audio {
  const duration = Math.max(...turns.map((t) => t.end)) + 0.5;
  const samples = new Float32Array(Math.round(duration * sampleRate));
  for (const { voice, start, end } of turns) {
    const harmonics = Math.floor(4000 / voice.f0);
    const gains = Array.from({ length: harmonics }, (_, h) => {
      const hz = (h + 1) * voice.f0;
      return voice.formants.reduce((g, f) => g + 1 / (1 + ((hz - f) / 150) ** 2), 0.02);
    });
    let phase = 0;
    for (let i = Math.round(start * sampleRate); i < Math.round(end * sampleRate); i++) {
      const t = i / sampleRate;
      phase += (2 * Math.PI * voice.f0 * (1 + 0.05 * Math.sin(2 * Math.PI * 0.7 * t))) / sampleRate;
      let x = 0;
      for (let h = 0; h < harmonics; h++) x += gains[h]! * Math.sin((h + 1) * phase);
      samples[i] = samples[i]! + 0.05 * x * (0.6 + 0.4 * Math.sin(2 * Math.PI * 4 * t));
    }
  }
  return { samples, sampleRate };
}
