import type { Audio } from '../audio/wav-reader';
import type { Segment } from '../timeline';

/**
 * Marks overlapped speech on a single-speaker timeline: returns the timeline with the
 * overlapped stretches split out as segments naming two (or more) speaker ids.
 */
export interface OverlapDetector {
  detect(audio: Audio, segments: Segment<number>[], signal?: AbortSignal): Promise<Segment<number>[]>;
}
