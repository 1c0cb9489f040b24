import { type Audio, readWav } from './audio/wav-reader';
import { throwIfAborted } from './abort';
import { BicClusterer } from './clustering/bic-clusterer';
import { countBounds, type SpeakersOption } from './clustering/count-bounds';
import type { SpeakerClusterer } from './clustering/speaker-clusterer';
import type { EmbeddingExtractor } from './embedding/embedding-extractor';
import { MfccStatsExtractor } from './embedding/mfcc-stats-extractor';
import { MixtureOverlapDetector } from './overlap/mixture-overlap-detector';
import type { OverlapDetector } from './overlap/overlap-detector';
import { buildTimeline, relabel, type Segment, type TimelineOptions } from './timeline';
import { SileroVad } from './vad/silero-vad';
import type { VoiceActivityDetector } from './vad/vad';
import { speechWindows, type WindowOptions } from './windows';

export interface DiarizeOptions {
  /** `true`: estimate the count (1 to 20); a number: exactly that many; `{min, max}`: estimate clamped. */
  speakers: SpeakersOption;
  /** Aborting rejects with the signal's reason between steps; the VAD stops at its next frame. */
  signal?: AbortSignal;
}

export interface DiarizationResult {
  /** Sorted by start; speakers named A, B, ... in order of first appearance. */
  segments: Segment[];
  /** Distinct speaker names in `segments`; 0 when no speech was found. */
  speakerCount: number;
}

/** The swappable parts of the pipeline. */
export interface DiarizerParts {
  vad: VoiceActivityDetector;
  extractor: EmbeddingExtractor;
  clusterer: SpeakerClusterer;
  /** Optional: without one, segments never name more than one speaker. */
  overlap?: OverlapDetector;
  windows?: WindowOptions;
  timeline?: TimelineOptions;
}

/** VAD -> windows -> embeddings -> clustering -> timeline. Holds loaded models: reuse one instance. */
export class Diarizer {
  constructor(private readonly parts: DiarizerParts) {}

  /** `wavPath`: 16 kHz mono 16-bit PCM WAV (what the worker's ffmpeg step writes). */
  async diarize(wavPath: string, options: DiarizeOptions): Promise<DiarizationResult> {
    return this.diarizeAudio(await readWav(wavPath), options);
  }

  async diarizeAudio(audio: Audio, { speakers, signal }: DiarizeOptions): Promise<DiarizationResult> {
    const bounds = countBounds(speakers);
    throwIfAborted(signal);
    const regions = await this.parts.vad.detect(audio, signal);
    throwIfAborted(signal);
    const windows = speechWindows(regions, this.parts.windows);
    if (windows.length === 0) return { segments: [], speakerCount: 0 };
    const embeddings = await this.parts.extractor.embed(audio, windows, signal);
    throwIfAborted(signal);
    const labels = await this.parts.clusterer.cluster({ audio, windows, embeddings }, bounds, signal);
    throwIfAborted(signal);
    let timeline = buildTimeline(regions, windows, labels, this.parts.timeline);
    if (this.parts.overlap) timeline = await this.parts.overlap.detect(audio, timeline, signal);
    throwIfAborted(signal);
    const segments = relabel(timeline);
    return { segments, speakerCount: new Set(segments.flatMap((s) => s.speakers)).size };
  }

  /** Releases the VAD's worker thread (idle workers do not keep the process alive anyway). */
  async close(): Promise<void> {
    await this.parts.vad.close?.();
  }
}

/** The default pipeline: Silero VAD, MFCC-statistics embeddings, AHC + BIC clustering, mixture-model overlap. */
export function createDiarizer(parts: Partial<DiarizerParts> = {}): Diarizer {
  return new Diarizer({
    vad: parts.vad ?? new SileroVad(),
    extractor: parts.extractor ?? new MfccStatsExtractor(),
    clusterer: parts.clusterer ?? new BicClusterer(),
    overlap: 'overlap' in parts ? parts.overlap : new MixtureOverlapDetector(),
    windows: parts.windows,
    timeline: parts.timeline,
  });
}

let shared: Diarizer | undefined;

/** Diarizes with a process-wide default pipeline, so the ONNX session loads once. */
export function diarize(wavPath: string, options: DiarizeOptions): Promise<DiarizationResult> {
  shared ??= createDiarizer();
  return shared.diarize(wavPath, options);
}
