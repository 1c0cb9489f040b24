import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import {
  type CommonConfig,
  ConfigError,
  type Env,
  LIMITS,
  bool,
  commonConfig,
  int,
  modelNameFromPath,
  num,
  oneOf,
  optStr,
  str,
} from '@hark/core';
import {
  DEFAULT_DECODING,
  DEFAULT_VAD,
  type DecodingOptions,
  VAD_MODEL_FILE,
  type VadOptions,
  QUANTIZE_TYPES,
  WORD_TIMESTAMPS,
  type QuantizeType,
  type TaskDecoding,
  wavSizeLimit,
} from '@hark/media';
import { type MetricsServerConfig, loadMetricsServerConfig } from '@hark/metrics';

/** The longest period a Node timer takes (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The repository root, where `scripts/build-whisper.sh` puts whisper-cli by default. */
const REPO_ROOT = path.resolve(__dirname, '../../..');

export interface WhisperConfig {
  /** `WHISPER_BIN`. Default: `<repo>/.hark/whisper/bin/whisper-cli`. */
  binaryPath: string;
  /** `WHISPER_MODEL`, a ggml model file. Required. */
  modelPath: string;
  /** `HARK_MODEL_NAME`, else derived from the file name (ggml-base.en.bin -> whisper-base.en). */
  modelName: string;
  /** `WHISPER_THREADS`. Default: the machine's cores divided by the job concurrency (at least 1). */
  threads: number;
  /**
   * `WHISPER_QUANTIZE`: at start the worker runs a copy of the model quantised to this type
   * (made once by whisper-quantize, kept in `HARK_MODEL_CACHE_DIR`); `off` runs the model as it
   * is. Default `q8_0` (bench/engine/README.md).
   */
  quantize: QuantizeType;
  /** `WHISPER_QUANTIZE_BIN`. Default: `whisper-quantize` beside the whisper-cli binary. */
  quantizeBin: string;
  /** `HARK_MODEL_CACHE_DIR`: where quantised models are kept. Default `<HARK_TMP_DIR>/models`. */
  modelCacheDir: string;
  /**
   * Decoding of each task: `WHISPER_BEAM_SIZE`, `WHISPER_BEST_OF`, `WHISPER_SUPPRESS_NST`,
   * `WHISPER_DECODE_THREADS` (0: all) for both, `WHISPER_AUDIO_CTX_MARGIN` (0: whole windows) for
   * transcription only: translation always encodes whole windows. Defaults: `DEFAULT_DECODING`.
   */
  decoding: TaskDecoding;
  /**
   * `WHISPER_WORD_TIMESTAMPS`: how words are timed. `dtw` (default): by DTW on every transcript
   * (token timestamps spread a window's words over its silences: after a silent lead-in they ran
   * seconds ahead of the speech); `auto`: DTW only for transcripts with speakers, whose labels go
   * by each word's time, saving the decoder pass per 30 s window DTW adds on the others;
   * `tokens`: never. See bench/engine/README.md "DTW word timestamps".
   */
  wordTimestamps: WordTimestampPolicy;
  /** The model's `-dtw` preset, read from its header at start (main.ts); null: none, tokens only. */
  dtwPreset?: string | null;
  /**
   * `WHISPER_VAD`: `on` decodes only the speech Silero VAD finds (whisper.cpp `--vad`), like
   * faster-whisper's `vad_filter`; `off` (the default) decodes everything. `WHISPER_VAD_MODEL`
   * (default `<repo>/.hark/models/` + `VAD_MODEL_FILE`, made by scripts/vad-model.sh),
   * `WHISPER_VAD_THRESHOLD` (0.5), `WHISPER_VAD_MIN_SILENCE_MS` (2000), `WHISPER_VAD_PAD_MS` (400).
   * Null when off. See bench/engine/README.md, "VAD".
   */
  vad: VadOptions | null;
}

/** `auto` (DTW with speakers only), or one of the engine's word timings always. */
export const WORD_TIMESTAMP_POLICIES = ['auto', ...WORD_TIMESTAMPS] as const;
export type WordTimestampPolicy = (typeof WORD_TIMESTAMP_POLICIES)[number];

export interface QueueTuning {
  /** `HARK_WORKER_CONCURRENCY`: jobs one process runs at once. Default 1. */
  concurrency: number;
  /** `HARK_JOB_LOCK_MS`: BullMQ lock; a dead worker's job is recovered after about this. Default 30 000. */
  lockDurationMs: number;
  /** `HARK_STALLED_INTERVAL_MS`: how often this worker looks for dead workers' jobs. Default 30 000. */
  stalledIntervalMs: number;
  /** `HARK_MAX_STALLED_COUNT`: worker deaths a job survives before it fails `engine_failed`. Default 2. */
  maxStalledCount: number;
}

export interface DiarizerConfig {
  /** `HARK_DIARIZER`: `neural` (segmentation-3.0 + CAM++, overlap-aware) or `classic` (Silero VAD + MFCC + BIC). Default neural. */
  kind: 'neural' | 'classic';
  /** `HARK_MODELS_DIR`: holds `diarization/segmentation-3.0.onnx` and `diarization/campplus.onnx`. Default `<repo>/../shared/models`. */
  modelsDir: string;
  /** `HARK_DIARIZER_THREADS`: onnxruntime threads of the neural diarizer. Default min(2, cores). */
  threads: number;
  /**
   * `HARK_SPEECH_GATE`: drop the words that come no nearer than 0.25 s to where the speech
   * segmentation hears someone (text Whisper invents in silence and noise), and move the edges of
   * the words kept that fall in its silence onto its speech, and the end of a word no later word
   * follows before its next change to that change (DTW's early starts and ends; with the classic
   * diarizer, asked for by `on` or `speakers`, by its Silero VAD timeline). `all`: every
   * transcript (with speakers by the diarization timeline, without by a segmentation-only pass,
   * `NeuralDiarizer.speech`); `speakers`: transcripts with speakers only; `off`. From
   * `HARK_SPEECH_GATE` `auto` (the default; `all` with the neural diarizer, whose models it
   * needs, but `speakers` with WHISPER_VAD=on, where the engine skips silence itself; `off` with
   * the classic one), `on` (`all`, or `speakers` with the classic diarizer), `speakers`, `off`.
   */
  speechGate: SpeechGate;
}

export type SpeechGate = 'all' | 'speakers' | 'off';

export interface WorkerConfig extends CommonConfig {
  whisper: WhisperConfig;
  diarizer: DiarizerConfig;
  queue: QueueTuning;
  /** `HARK_MAX_AUDIO_SECONDS`: longer audio fails `audio_too_long`. Default 36 000 (10 h). */
  maxAudioSeconds: number;
  /** `HARK_MAX_DOWNLOAD_BYTES`: a bigger `url` body fails `audio_too_large`. Default 2 GiB. */
  maxDownloadBytes: number;
  /** `HARK_DOWNLOAD_TIMEOUT_MS`: whole download, first byte to last. Default 15 min (2 GiB at ~20 Mbit/s). */
  downloadTimeoutMs: number;
  /** `HARK_TMP_DIR`: per-job scratch folders (downloads, decoded WAV). Default `<os tmp>/hark-worker`. */
  tmpDir: string;
  /**
   * `HARK_JOB_SCRATCH_BYTES`: the most one job may write to its scratch folder (the audio's copy
   * and the decoded WAV); a job that would pass it fails `audio_too_large`, not charged. Size the
   * folder's disk at concurrency x this. Default: the largest download plus the WAV of the longest
   * accepted audio (2 GiB + 1.15 GB for 10 h), which fails no accepted job.
   */
  jobScratchBytes: number;
  /** `HARK_SHUTDOWN_GRACE_MS`: on SIGTERM, how long active jobs may run on before being handed back. Default 25 000. */
  shutdownGraceMs: number;
  /** `HARK_RETENTION_SWEEP_MS`: period of the retention and upload sweeps; 0 turns them off (not the reconciler). Default 60 000. */
  sweepIntervalMs: number;
  /**
   * `HARK_RECONCILE_INTERVAL_MS`: period of the reconciler (lost jobs, unfed accounts,
   * `HARK_MAX_PROCESSING_MS`), independent of the retention sweeps. 0 turns it off (the test
   * harnesses, which share one database; a warning at start): then a transcript whose job was
   * lost stays processing. Default 60 000.
   */
  reconcileIntervalMs: number;
  /** `HARK_UPLOAD_TTL_HOURS`: uploads no transcript uses are removed after this. Default 24. */
  uploadTtlHours: number;
  /** `HARK_MAX_PROCESSING_MS`: a transcript still processing after this fails `engine_failed`. Default 24 h. */
  maxProcessingMs: number;
  /** `HARK_RECONCILE_GRACE_MS`: processing transcripts younger than this are not checked for a job. Default 60 000. */
  reconcileGraceMs: number;
  /** `HARK_QUEUED_PER_ACCOUNT`: transcribe jobs one account may have waiting in the queue; the
   *  rest wait in Postgres and are fed in as its jobs start (fair scheduling). Default 1. The
   *  API reads the same variable: set it alike on both. */
  queuedPerAccount: number;
  /** `HARK_DB_POOL_SIZE`. Default: concurrency + 3 (jobs, sweeps, the failure listener). */
  dbPoolSize: number;
  /** `/metrics` and `/healthz` server: `HARK_METRICS_PORT` (default 9464, 0 = off), `HARK_METRICS_HOST` (127.0.0.1), `HARK_METRICS_TOKEN` (unset: loopback clients only). */
  metrics: MetricsServerConfig;
}

/** The engine's decoding for each task. */
function taskDecoding(env: Env): TaskDecoding {
  const transcribe: DecodingOptions = {
    beamSize: int(env, 'WHISPER_BEAM_SIZE', DEFAULT_DECODING.beamSize, 1, 16),
    bestOf: int(env, 'WHISPER_BEST_OF', DEFAULT_DECODING.bestOf, 1, 16),
    suppressNonSpeech: bool(env, 'WHISPER_SUPPRESS_NST', DEFAULT_DECODING.suppressNonSpeech),
    audioContextMargin: int(env, 'WHISPER_AUDIO_CTX_MARGIN', DEFAULT_DECODING.audioContextMargin, 0, 1500),
    decodeThreads: int(env, 'WHISPER_DECODE_THREADS', DEFAULT_DECODING.decodeThreads, 0, 256),
  };
  return {
    transcribe,
    // The fitted audio context was measured on transcription only; translation keeps whole
    // windows (on a short German clip the fitted one turned the English into another sentence).
    translate: { ...transcribe, audioContextMargin: 0 },
  };
}

/** `WHISPER_VAD` and its settings; null when off. */
function vadOptions(env: Env): VadOptions | null {
  if (oneOf(env, 'WHISPER_VAD', ['off', 'on'] as const, 'off') === 'off') return null;
  const threshold = num(env, 'WHISPER_VAD_THRESHOLD', DEFAULT_VAD.threshold, 0);
  if (threshold <= 0 || threshold >= 1)
    throw new ConfigError(`WHISPER_VAD_THRESHOLD must be above 0 and below 1, got ${threshold}`);
  return {
    modelPath: path.resolve(
      str(env, 'WHISPER_VAD_MODEL', path.join(REPO_ROOT, '.hark/models', VAD_MODEL_FILE)),
    ),
    threshold,
    minSpeechMs: DEFAULT_VAD.minSpeechMs,
    minSilenceMs: int(env, 'WHISPER_VAD_MIN_SILENCE_MS', DEFAULT_VAD.minSilenceMs, 0, 60_000),
    speechPadMs: int(env, 'WHISPER_VAD_PAD_MS', DEFAULT_VAD.speechPadMs, 0, 5_000),
  };
}

/**
 * `HARK_SPEECH_GATE`: `auto` gates every transcript behind the neural diarizer's segmentation.
 * Over fifteen real meeting excerpts its timeline drops 55 of the 72 words the engine wrote in
 * reference silence and 2 of the 715 in speech, and the segmentation-only pass of transcripts
 * without speakers the same 55 and 3; on read speech (jfk.wav, speech-60s.wav, 16 LJSpeech
 * utterances) it drops none of 416. The classic pipeline (Silero VAD) would drop 27 real words
 * and has no speech pass of its own (bench/der/README.md, "Words in silence").
 */
function speechGate(env: Env, kind: DiarizerConfig['kind'], vad: boolean): SpeechGate {
  const asked = oneOf(env, 'HARK_SPEECH_GATE', ['auto', 'on', 'speakers', 'off'] as const, 'auto');
  if (asked === 'off' || asked === 'speakers') return asked;
  // With WHISPER_VAD=on the engine writes no word in silence (bench/der README, "Words with
  // VAD"): `auto` spares plain transcripts the pass, which would only cost.
  if (kind === 'neural') return asked === 'auto' && vad ? 'speakers' : 'all';
  return asked === 'on' ? 'speakers' : 'off';
}

/** Parses the worker's configuration once at boot. Throws ConfigError naming the bad variable. */
export function loadWorkerConfig(env: Env = process.env): WorkerConfig {
  const common = commonConfig(env);
  const concurrency = int(env, 'HARK_WORKER_CONCURRENCY', 1, 1, 64);
  const modelPath = str(env, 'WHISPER_MODEL');
  const lockDurationMs = int(env, 'HARK_JOB_LOCK_MS', 30_000, 500);
  const binaryPath = str(env, 'WHISPER_BIN', path.join(REPO_ROOT, '.hark/whisper/bin/whisper-cli'));
  const tmpDir = path.resolve(str(env, 'HARK_TMP_DIR', path.join(tmpdir(), 'hark-worker')));
  const diarizerKind = oneOf(env, 'HARK_DIARIZER', ['neural', 'classic'] as const, 'neural');
  const maxAudioSeconds = int(env, 'HARK_MAX_AUDIO_SECONDS', LIMITS.maxAudioSeconds, 1);
  const maxDownloadBytes = int(env, 'HARK_MAX_DOWNLOAD_BYTES', LIMITS.maxDownloadBytes, 1);
  return {
    ...common,
    whisper: {
      binaryPath,
      modelPath,
      modelName: optStr(env, 'HARK_MODEL_NAME') ?? modelNameFromPath(modelPath),
      threads: int(
        env,
        'WHISPER_THREADS',
        Math.max(1, Math.floor(availableParallelism() / concurrency)),
        1,
        256,
      ),
      quantize: oneOf(env, 'WHISPER_QUANTIZE', QUANTIZE_TYPES, 'q8_0'),
      quantizeBin: str(env, 'WHISPER_QUANTIZE_BIN', path.join(path.dirname(binaryPath), 'whisper-quantize')),
      modelCacheDir: path.resolve(str(env, 'HARK_MODEL_CACHE_DIR', path.join(tmpDir, 'models'))),
      decoding: taskDecoding(env),
      wordTimestamps: oneOf(env, 'WHISPER_WORD_TIMESTAMPS', WORD_TIMESTAMP_POLICIES, 'dtw'),
      vad: vadOptions(env),
    },
    diarizer: {
      kind: diarizerKind,
      modelsDir: path.resolve(str(env, 'HARK_MODELS_DIR', path.join(REPO_ROOT, '../shared/models'))),
      threads: int(env, 'HARK_DIARIZER_THREADS', Math.min(2, availableParallelism()), 1, 64),
      speechGate: speechGate(env, diarizerKind, vadOptions(env) !== null),
    },
    queue: {
      concurrency,
      lockDurationMs,
      // BullMQ renews the lock every lockDuration / 2; a check more often than that finds nothing new.
      stalledIntervalMs: int(env, 'HARK_STALLED_INTERVAL_MS', 30_000, 100),
      maxStalledCount: int(env, 'HARK_MAX_STALLED_COUNT', 2, 0, 100),
    },
    maxAudioSeconds,
    maxDownloadBytes,
    downloadTimeoutMs: int(env, 'HARK_DOWNLOAD_TIMEOUT_MS', 15 * 60_000, 1000),
    tmpDir,
    jobScratchBytes: int(
      env,
      'HARK_JOB_SCRATCH_BYTES',
      maxDownloadBytes + wavSizeLimit(maxAudioSeconds),
      64 * 1024,
    ),
    shutdownGraceMs: int(env, 'HARK_SHUTDOWN_GRACE_MS', 25_000, 0),
    sweepIntervalMs: int(env, 'HARK_RETENTION_SWEEP_MS', 60_000, 0, MAX_TIMER_MS),
    reconcileIntervalMs: int(env, 'HARK_RECONCILE_INTERVAL_MS', 60_000, 0, MAX_TIMER_MS),
    uploadTtlHours: int(env, 'HARK_UPLOAD_TTL_HOURS', 24, 1),
    maxProcessingMs: int(env, 'HARK_MAX_PROCESSING_MS', 24 * 3600_000, 1000),
    reconcileGraceMs: int(env, 'HARK_RECONCILE_GRACE_MS', 60_000, 0),
    queuedPerAccount: int(env, 'HARK_QUEUED_PER_ACCOUNT', 1, 1, 1000),
    dbPoolSize: int(env, 'HARK_DB_POOL_SIZE', concurrency + 3, 2),
    metrics: loadMetricsServerConfig(env, 9464),
  };
}
