import type { Audio } from '../audio/wav-reader';
import type { TimeWindow } from '../embedding/embedding-extractor';
import type { CountBounds } from './count-bounds';

export interface ClusterInput {
  audio: Audio;
  windows: TimeWindow[];
  /** One embedding per window, same order. */
  embeddings: Float32Array[];
}

/**
 * Groups windows by speaker. Returns one label per window, 0..k-1, with k inside `bounds`
 * whenever there are at least `bounds.min` windows.
 */
export interface SpeakerClusterer {
  cluster(input: ClusterInput, bounds: CountBounds, signal?: AbortSignal): Promise<number[]>;
}
