export { parseWav, readWav, WavFormatError, type Audio } from './audio/wav-reader';
export { averageLinkage, cosineDistance, cutTree, type Merge } from './clustering/agglomerative';
export { BicClusterer, type BicClustererOptions } from './clustering/bic-clusterer';
export {
  clampCount,
  countBounds,
  MAX_SPEAKERS,
  type CountBounds,
  type SpeakersOption,
} from './clustering/count-bounds';
export type { ClusterInput, SpeakerClusterer } from './clustering/speaker-clusterer';
export {
  createDiarizer,
  diarize,
  Diarizer,
  type DiarizationResult,
  type DiarizeOptions,
  type DiarizerParts,
} from './diarizer';
export type { EmbeddingExtractor, TimeWindow } from './embedding/embedding-extractor';
export { MfccStatsExtractor, type MfccStatsOptions } from './embedding/mfcc-stats-extractor';
export { relabel, speakerName, type Segment, type TimelineOptions } from './timeline';
export { SileroVad, type SileroVadOptions } from './vad/silero-vad';
export type { SpeechRegion, VoiceActivityDetector } from './vad/vad';
export { speechWindows, type WindowOptions } from './windows';
export {
  buildUtterances,
  labelWords,
  SPEECH_GATE_MARGIN,
  snapToSpeech,
  type Span,
  type SnapOptions,
  wordsNearSpeech,
  type LabeledWord,
  type Utterance,
  type UtteranceOptions,
  type Word,
} from './words';
export { NeuralDiarizer, defaultModelsDir, type NeuralDiarizerOptions } from './neural/neural-diarizer';
export type { EmbeddingClusteringOptions } from './neural/embedding-clustering';
