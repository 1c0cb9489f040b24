import type { Audio } from '../audio/wav-reader';

/** A stretch of speech, in seconds from the start of the audio. */
export interface SpeechRegion {
  start: number;
  end: number;
}

/** Finds where anyone speaks. Regions are sorted and do not overlap. */
export interface VoiceActivityDetector {
  detect(audio: Audio, signal?: AbortSignal): Promise<SpeechRegion[]>;
  /** Releases models or threads, if the detector holds any. */
  close?(): Promise<void>;
}
