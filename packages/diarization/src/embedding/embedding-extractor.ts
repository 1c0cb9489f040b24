import type { Audio } from '../audio/wav-reader';

/** A stretch of audio to embed, in seconds. */
export interface TimeWindow {
  start: number;
  end: number;
}

/**
 * Turns windows of one recording into fixed-size speaker embeddings, compared by cosine.
 * The whole recording is passed at once so an extractor can normalise per recording (CMVN) or
 * batch windows through a model; an ONNX speaker-embedding model fits behind the same shape.
 */
export interface EmbeddingExtractor {
  embed(audio: Audio, windows: TimeWindow[], signal?: AbortSignal): Promise<Float32Array[]>;
}
