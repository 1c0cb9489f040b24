import type { TimeWindow } from './embedding/embedding-extractor';
import type { SpeechRegion } from './vad/vad';

export interface WindowOptions {
  /** Window length in seconds. Default 1.5. */
  length?: number;
  /** Step between window starts in seconds. Default 0.75. */
  hop?: number;
}

/**
 * Cuts each speech region into overlapping windows. A region shorter than one window becomes a
 * single window; the last window of a longer region is aligned to the region's end so the tail
 * is covered without a short, noisy window.
 */
export function speechWindows(regions: SpeechRegion[], options: WindowOptions = {}): TimeWindow[] {
  const length = options.length ?? 1.5;
  const hop = options.hop ?? 0.75;
  const windows: TimeWindow[] = [];
  for (const { start, end } of regions) {
    if (end - start <= length) {
      windows.push({ start, end });
      continue;
    }
    let covered = start;
    for (let at = start; at + length <= end + 1e-6; at += hop) {
      windows.push({ start: at, end: at + length });
      covered = at + length;
    }
    if (end - covered > 0.01) windows.push({ start: end - length, end });
  }
  return windows;
}
