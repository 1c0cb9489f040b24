export {
  MediaError,
  MediaAbortError,
  isAbortError,
  type MediaErrorCode,
  type MediaErrorOptions,
} from './media-error';
export {
  runProcess,
  findOnPath,
  findPrlimit,
  formatCommandLine,
  ProcessError,
  type RunProcess,
  type RunOptions,
  type RunResult,
  type ProcessErrorDetails,
} from './process-runner';
export {
  INPUT_DEMUXERS,
  PROBE_TIMEOUT_MS,
  TOOL_ADDRESS_SPACE_BYTES,
  type FfmpegCallOptions,
} from './ffmpeg-tools';
export {
  probeAudio,
  normaliseProbe,
  PROBE_ENTRIES,
  SANE_SAMPLE_RATES,
  MAX_CHANNELS,
  type ProbeResult,
} from './probe';
export {
  decodeToWav,
  readWavDuration,
  wavSizeLimit,
  wavDataBytes,
  meanDownmix,
  DECODE_MARGIN_SECONDS,
  type DecodeOptions,
  type DecodeResult,
} from './decode';
export {
  DEFAULT_DECODING,
  DEFAULT_VAD,
  VAD_MODEL_FILE,
  WORD_TIMESTAMPS,
  WhisperEngine,
  decodingArgs,
  decodingEnv,
  type DecodingOptions,
  type VadOptions,
  type TaskDecoding,
  type TranscribeInput,
  type WhisperEngineOptions,
  type WhisperTask,
  type WordTimestamps,
} from './whisper';
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
export { dtwPreset, dtwPresetFor } from './dtw-preset';
export { checkWhisperModel, readModelHeader, type ModelHeader } from './model-header';
export {
  QUANTIZE_TYPES,
  prepareModel,
  readModelFtype,
  type PrepareModelOptions,
  type PreparedModel,
  type QuantizeType,
} from './quantize';
export {
  ENGINE_ISAS,
  hostCpu,
  isaOf,
  parseSystemInfo,
  probeEngineCpu,
  type EngineCpu,
  type EngineIsa,
  type ProbeEngineCpuOptions,
} from './engine-cpu';
export { padShortWav, MIN_ENGINE_SAMPLES } from './short-audio';
export { pcmWav, wavLayout, type WavLayout } from './wav';
