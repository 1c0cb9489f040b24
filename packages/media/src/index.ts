export {
  MediaError,
  MediaAbortError,
  isAbortError,
  type MediaErrorCode,
  type MediaErrorOptions,
} from './media-error';
export {
  runProcess,
  formatCommandLine,
  ProcessError,
  type RunProcess,
  type RunOptions,
  type RunResult,
  type ProcessErrorDetails,
} from './process-runner';
export { type FfmpegCallOptions } from './ffmpeg-tools';
export { probeAudio, normaliseProbe, type ProbeResult } from './probe';
export { decodeToWav, readWavDuration, type DecodeResult } from './decode';
export { WhisperEngine, type WhisperEngineOptions, type TranscribeInput } from './whisper';
export {
  parseWhisperJson,
  WhisperOutputError,
  type WhisperResult,
  type WhisperSegment,
} from './whisper-output';
export {
  applyCorrections,
  applyBuiltInCorrections,
  applyGlossary,
  wordsToText,
  type Glossary,
} from './glossary';
export { type TimedWord } from './words';
