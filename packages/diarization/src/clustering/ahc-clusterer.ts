import { averageLinkage, clustersBelow, cutTree } from './agglomerative';
import { clampCount, type CountBounds } from './count-bounds';
import type { ClusterInput, SpeakerClusterer } from './speaker-clusterer';

export interface AhcClustererOptions {
  /** Cosine distance at which the dendrogram is cut when the count is estimated. Default 0.7. */
  threshold?: number;
}

/**
 * Average-linkage AHC on cosine distance, cut at a distance threshold and clamped to the bounds.
 * Meant for calibrated neural embeddings, where one threshold holds across recordings; the
 * MFCC-statistics embeddings are not calibrated that way (see BicClusterer). Quadratic memory:
 * fine up to a few thousand windows.
 */
export class AhcClusterer implements SpeakerClusterer {
  constructor(private readonly options: AhcClustererOptions = {}) {}

  async cluster({ embeddings }: ClusterInput, bounds: CountBounds): Promise<number[]> {
    const n = embeddings.length;
    if (n <= 1) return new Array<number>(n).fill(0);
    const merges = averageLinkage(embeddings);
    const estimate = clustersBelow(merges, n, this.options.threshold ?? 0.7);
    return cutTree(merges, n, Math.min(n, clampCount(estimate, bounds)));
  }
}
