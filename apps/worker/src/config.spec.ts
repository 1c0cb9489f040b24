import { DEFAULT_DECODING, DEFAULT_VAD } from '@hark/media';
import { loadWorkerConfig } from './config';

const base = {
  DATABASE_URL: 'postgresql://x@127.0.0.1/db',
  HARK_SECRET: '0123456789abcdef-secret',
  WHISPER_MODEL: '/models/ggml-base.en.bin',
};

describe('loadWorkerConfig', () => {
  it('applies the documented defaults', () => {
    const c = loadWorkerConfig(base);
    expect(c.whisper.modelName).toBe('whisper-base.en');
    expect(c.whisper.binaryPath).toMatch(/\.hark\/whisper\/bin\/whisper-cli$/);
    expect(c.whisper.threads).toBeGreaterThanOrEqual(1);
    expect(c.queue).toEqual({
      concurrency: 1,
      lockDurationMs: 30_000,
      stalledIntervalMs: 30_000,
      maxStalledCount: 2,
    });
    expect(c.maxAudioSeconds).toBe(36_000);
    expect(c.maxDownloadBytes).toBe(2 * 1024 ** 3);
    expect(c.uploadTtlHours).toBe(24);
    expect(c.sweepIntervalMs).toBe(60_000);
    expect(c.queuedPerAccount).toBe(1);
  });

  it('runs a q8_0 copy of the model with the measured decoding by default, each part configurable', () => {
    const c = loadWorkerConfig({ ...base, WHISPER_BIN: '/opt/w/whisper-cli', HARK_TMP_DIR: '/scratch' });
    expect(c.whisper).toMatchObject({
      quantize: 'q8_0',
      quantizeBin: '/opt/w/whisper-quantize',
      modelCacheDir: '/scratch/models',
      decoding: { transcribe: DEFAULT_DECODING, translate: { ...DEFAULT_DECODING, audioContextMargin: 0 } },
    });
    // The fitted audio context is for transcription only: translation encodes whole windows.
    expect(DEFAULT_DECODING.audioContextMargin).toBeGreaterThan(0);
    const tuned = loadWorkerConfig({
      ...base,
      WHISPER_QUANTIZE: 'off',
      WHISPER_QUANTIZE_BIN: '/q',
      HARK_MODEL_CACHE_DIR: '/cache',
      WHISPER_BEAM_SIZE: '5',
      WHISPER_BEST_OF: '2',
      WHISPER_SUPPRESS_NST: 'false',
      WHISPER_AUDIO_CTX_MARGIN: '0',
      WHISPER_DECODE_THREADS: '0',
    });
    expect(tuned.whisper).toMatchObject({
      quantize: 'off',
      quantizeBin: '/q',
      modelCacheDir: '/cache',
      decoding: {
        transcribe: {
          beamSize: 5,
          bestOf: 2,
          suppressNonSpeech: false,
          audioContextMargin: 0,
          decodeThreads: 0,
        },
        translate: {
          beamSize: 5,
          bestOf: 2,
          suppressNonSpeech: false,
          audioContextMargin: 0,
          decodeThreads: 0,
        },
      },
    });
    const margin = loadWorkerConfig({ ...base, WHISPER_AUDIO_CTX_MARGIN: '100' }).whisper.decoding;
    expect([margin.transcribe.audioContextMargin, margin.translate.audioContextMargin]).toEqual([100, 0]);
    expect(() => loadWorkerConfig({ ...base, WHISPER_QUANTIZE: 'q3' })).toThrow(/WHISPER_QUANTIZE/);
    expect(() => loadWorkerConfig({ ...base, WHISPER_BEAM_SIZE: '0' })).toThrow(/WHISPER_BEAM_SIZE/);
  });

  it('times words by DTW by default; auto (DTW with speakers only) or tokens on request', () => {
    expect(loadWorkerConfig(base).whisper.wordTimestamps).toBe('dtw');
    expect(loadWorkerConfig({ ...base, WHISPER_WORD_TIMESTAMPS: 'auto' }).whisper.wordTimestamps).toBe(
      'auto',
    );
    expect(loadWorkerConfig({ ...base, WHISPER_WORD_TIMESTAMPS: 'dtw' }).whisper.wordTimestamps).toBe('dtw');
    expect(loadWorkerConfig({ ...base, WHISPER_WORD_TIMESTAMPS: 'tokens' }).whisper.wordTimestamps).toBe(
      'tokens',
    );
    expect(() => loadWorkerConfig({ ...base, WHISPER_WORD_TIMESTAMPS: 'words' })).toThrow(
      /WHISPER_WORD_TIMESTAMPS/,
    );
  });

  it('picks the diarizer: neural by default, classic on request; models from HARK_MODELS_DIR', () => {
    const c = loadWorkerConfig(base);
    expect(c.diarizer.kind).toBe('neural');
    expect(c.diarizer.modelsDir).toMatch(/shared\/models$/);
    expect(c.diarizer.threads).toBeGreaterThanOrEqual(1);
    const classic = loadWorkerConfig({ ...base, HARK_DIARIZER: 'classic', HARK_MODELS_DIR: '/m' });
    expect(classic.diarizer).toMatchObject({ kind: 'classic', modelsDir: '/m' });
    expect(() => loadWorkerConfig({ ...base, HARK_DIARIZER: 'pyannote' })).toThrow(/HARK_DIARIZER/);
  });

  it('gates the words of every transcript behind the neural diarizer unless told otherwise (HARK_SPEECH_GATE)', () => {
    const gate = (env: Record<string, string>) => loadWorkerConfig({ ...base, ...env }).diarizer.speechGate;
    expect(gate({})).toBe('all');
    expect(gate({ HARK_SPEECH_GATE: 'on' })).toBe('all');
    expect(gate({ HARK_SPEECH_GATE: 'speakers' })).toBe('speakers');
    expect(gate({ HARK_SPEECH_GATE: 'off' })).toBe('off');
    // The classic pipeline has no speech pass: at most the transcripts with speakers, when asked.
    expect(gate({ HARK_DIARIZER: 'classic' })).toBe('off');
    expect(gate({ HARK_DIARIZER: 'classic', HARK_SPEECH_GATE: 'on' })).toBe('speakers');
    expect(() => gate({ HARK_SPEECH_GATE: 'yes' })).toThrow(/HARK_SPEECH_GATE/);
    // With WHISPER_VAD=on the engine decodes only speech: the plain transcripts' pass would only cost.
    expect(gate({ WHISPER_VAD: 'on' })).toBe('speakers');
    expect(gate({ WHISPER_VAD: 'on', HARK_SPEECH_GATE: 'on' })).toBe('all');
  });

  it('decodes everything by default; WHISPER_VAD=on decodes only the speech Silero finds, each setting checked', () => {
    expect(loadWorkerConfig(base).whisper.vad).toBeNull();
    expect(
      loadWorkerConfig({ ...base, WHISPER_VAD: 'off', WHISPER_VAD_THRESHOLD: '7' }).whisper.vad,
    ).toBeNull();
    const on = loadWorkerConfig({ ...base, WHISPER_VAD: 'on' }).whisper.vad;
    expect(on).toEqual({
      ...DEFAULT_VAD,
      modelPath: expect.stringMatching(/\.hark\/models\/ggml-silero-v5\.1\.2\.bin$/),
    });
    expect(DEFAULT_VAD).toEqual({ threshold: 0.5, minSpeechMs: 250, minSilenceMs: 2000, speechPadMs: 400 });
    const tuned = loadWorkerConfig({
      ...base,
      WHISPER_VAD: 'on',
      WHISPER_VAD_MODEL: '/m/vad.bin',
      WHISPER_VAD_THRESHOLD: '0.35',
      WHISPER_VAD_MIN_SILENCE_MS: '500',
      WHISPER_VAD_PAD_MS: '200',
    }).whisper.vad;
    expect(tuned).toEqual({
      modelPath: '/m/vad.bin',
      threshold: 0.35,
      minSpeechMs: 250,
      minSilenceMs: 500,
      speechPadMs: 200,
    });
    for (const [name, value] of [
      ['WHISPER_VAD', 'yes'],
      ['WHISPER_VAD_THRESHOLD', '1'],
      ['WHISPER_VAD_THRESHOLD', '0'],
      ['WHISPER_VAD_THRESHOLD', 'half'],
      ['WHISPER_VAD_MIN_SILENCE_MS', '-1'],
      ['WHISPER_VAD_PAD_MS', '1.5'],
    ] as const)
      expect(() => loadWorkerConfig({ ...base, WHISPER_VAD: 'on', [name]: value })).toThrow(name);
  });

  it('derives the model name from a test model file, unless HARK_MODEL_NAME says otherwise', () => {
    expect(
      loadWorkerConfig({ ...base, WHISPER_MODEL: '/m/for-tests-ggml-base.en.bin' }).whisper.modelName,
    ).toBe('whisper-base.en');
    expect(loadWorkerConfig({ ...base, HARK_MODEL_NAME: 'whisper-large-v3' }).whisper.modelName).toBe(
      'whisper-large-v3',
    );
  });

  it("bounds one job's scratch space: by default the largest download plus the WAV of the longest audio", () => {
    // 2 GiB + 36,001 s x 32,000 B/s + 4,096 B of header room.
    expect(loadWorkerConfig(base).jobScratchBytes).toBe(2 * 1024 ** 3 + 36_001 * 32_000 + 4096);
    const small = { HARK_MAX_DOWNLOAD_BYTES: '1000000', HARK_MAX_AUDIO_SECONDS: '60' };
    expect(loadWorkerConfig({ ...base, ...small }).jobScratchBytes).toBe(1_000_000 + 61 * 32_000 + 4096);
    expect(loadWorkerConfig({ ...base, HARK_JOB_SCRATCH_BYTES: '500000000' }).jobScratchBytes).toBe(
      500_000_000,
    );
    expect(() => loadWorkerConfig({ ...base, HARK_JOB_SCRATCH_BYTES: '1000' })).toThrow(
      /HARK_JOB_SCRATCH_BYTES/,
    );
  });

  it('splits the cores between concurrent jobs by default', () => {
    const one = loadWorkerConfig(base).whisper.threads;
    const c = loadWorkerConfig({ ...base, HARK_WORKER_CONCURRENCY: '64' });
    expect(c.whisper.threads).toBe(Math.max(1, Math.floor((one * 1) / 64)));
    expect(loadWorkerConfig({ ...base, WHISPER_THREADS: '3' }).whisper.threads).toBe(3);
  });

  it('reconciles every HARK_RECONCILE_INTERVAL_MS, whatever the retention sweep period', () => {
    expect(loadWorkerConfig(base).reconcileIntervalMs).toBe(60_000);
    const c = loadWorkerConfig({ ...base, HARK_RETENTION_SWEEP_MS: '0' });
    expect([c.sweepIntervalMs, c.reconcileIntervalMs]).toEqual([0, 60_000]);
    expect(loadWorkerConfig({ ...base, HARK_RECONCILE_INTERVAL_MS: '5000' }).reconcileIntervalMs).toBe(5000);
    expect(() => loadWorkerConfig({ ...base, HARK_RECONCILE_INTERVAL_MS: 'often' })).toThrow(
      /HARK_RECONCILE_INTERVAL_MS/,
    );
  });

  it('refuses a HARK_METRICS_TOKEN shorter than 16 characters, as the API does', () => {
    expect(() => loadWorkerConfig({ ...base, HARK_METRICS_TOKEN: 'abc' })).toThrow(
      'HARK_METRICS_TOKEN must be at least 16 characters',
    );
    expect(loadWorkerConfig({ ...base, HARK_METRICS_TOKEN: 'scrape-token-0123456789' }).metrics.token).toBe(
      'scrape-token-0123456789',
    );
    expect(loadWorkerConfig({ ...base, HARK_METRICS_TOKEN: '' }).metrics.token).toBeUndefined();
  });

  it('LOG_LEVEL must be a log level, and its error names it', () => {
    expect(() => loadWorkerConfig({ ...base, LOG_LEVEL: 'verbose' })).toThrow(/^LOG_LEVEL must be one of/);
    expect(loadWorkerConfig({ ...base, LOG_LEVEL: 'debug' }).logLevel).toBe('debug');
    expect(loadWorkerConfig({ ...base, LOG_LEVEL: 'silent' }).logLevel).toBe('silent');
    expect(loadWorkerConfig(base).logLevel).toBe('info');
  });

  it('fails fast naming the bad variable', () => {
    expect(() => loadWorkerConfig({ ...base, WHISPER_MODEL: '' })).toThrow('WHISPER_MODEL is required');
    expect(() => loadWorkerConfig({ ...base, HARK_WORKER_CONCURRENCY: '0' })).toThrow(
      /HARK_WORKER_CONCURRENCY/,
    );
    expect(() => loadWorkerConfig({ ...base, HARK_MAX_AUDIO_SECONDS: '5s' })).toThrow(
      /HARK_MAX_AUDIO_SECONDS/,
    );
    expect(() => loadWorkerConfig({ ...base, WHISPER_THREADS: '-1' })).toThrow(/WHISPER_THREADS/);
    expect(() => loadWorkerConfig({ ...base, HARK_SHUTDOWN_GRACE_MS: 'soon' })).toThrow(
      /HARK_SHUTDOWN_GRACE_MS/,
    );
  });
});
