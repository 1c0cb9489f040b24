// Hark transcription worker: wires configuration, Postgres, Redis and the BullMQ worker, then
// runs until SIGTERM (finish or hand back the active job, exit 0).
import '@hark/core/require-node'; // first: an older Node stops here, saying which it needs
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { checkDatabase, createDb } from '@hark/db';
import { serveMetrics } from '@hark/metrics';
import {
  closeOnSignals,
  exitOnSignalsUntilReady,
  logRedisErrors,
  waitForRedis,
  workerConnection,
} from '@hark/queue';
import { checkWhisperModel, dtwPreset, findOnPath, prepareModel, probeEngineCpu } from '@hark/media';
import { describeStorage } from '@hark/storage';
import type { Logger } from 'pino';
import { type WorkerConfig, loadWorkerConfig } from './config';
import { createLogger } from './logger';
import { startWorker } from './worker';

async function main(): Promise<void> {
  const config = loadWorkerConfig();
  const logger = createLogger(config.logLevel);
  const ready = exitOnSignalsUntilReady(logger, 'worker');
  await checkEngine(config);
  await logEngineCpu(config, logger);
  await checkVadModel(config);
  const db = createDb({ databaseUrl: config.databaseUrl, poolSize: config.dbPoolSize });
  const redis = workerConnection(config.redisUrl);
  logRedisErrors(redis, (fields, msg) => logger.warn(fields, msg));
  await checkDatabase(db, config.startTimeoutMs);
  await waitForRedis(redis, config.startTimeoutMs);
  config.whisper.modelPath = await prepareEngineModel(config, logger);
  config.whisper.dtwPreset = await modelDtwPreset(config, logger);
  // From here a signal closes what has started: once the consumer runs, it holds jobs that must
  // be finished or handed back, not abandoned by the start-up handler's plain exit.
  const started: {
    running?: Awaited<ReturnType<typeof startWorker>>;
    metricsServer?: Awaited<ReturnType<typeof serveMetrics>>;
  } = {};
  ready();
  closeOnSignals({
    logger,
    name: 'worker',
    starting: (signal) =>
      logger.info(
        { signal, active: started.running?.active.size ?? 0, graceMs: config.shutdownGraceMs },
        'shutting down: no new jobs',
      ),
    close: async () => started.running?.close(),
    release: () => Promise.allSettled([db.$disconnect(), redis.quit(), started.metricsServer?.close()]),
  });
  const running = await startWorker({ config, db, redis, logger });
  started.running = running;
  started.metricsServer = await serveMetrics(config.metrics, running.metrics.registry, logger);
  logger.info(
    {
      concurrency: config.queue.concurrency,
      model: config.whisper.modelName,
      threads: config.whisper.threads,
      vad: config.whisper.vad !== null,
      storage: describeStorage(config),
    },
    'worker ready',
  );
}

/**
 * An engine binary that cannot run, or a model whisper-cli cannot load, would fail every job
 * (`engine_failed`, after every retry, on whichever transcripts this worker takes): the worker
 * does not start. The binary is not run here (a stand-in script may do anything); it must be an
 * executable file. The model must be a readable ggml whisper model (its header).
 */
async function checkEngine(config: WorkerConfig): Promise<void> {
  const { binaryPath, modelPath } = config.whisper;
  // A bare command name is looked up on PATH, as spawn does; a path is taken as it is.
  const bin = binaryPath.includes('/') ? binaryPath : findOnPath(binaryPath);
  const info = bin ? await stat(bin).catch(() => null) : null;
  if (!bin || !info?.isFile())
    throw new Error(
      `WHISPER_BIN ${binaryPath} is not a file (build whisper-cli with scripts/build-whisper.sh, or set WHISPER_BIN)`,
    );
  await access(bin, constants.X_OK).catch(() => {
    throw new Error(`WHISPER_BIN ${binaryPath} is not executable`);
  });
  await checkWhisperModel(modelPath).catch((error: unknown) => {
    const e = error as NodeJS.ErrnoException;
    throw new Error(
      e.code
        ? `WHISPER_MODEL ${modelPath} cannot be read (${e.code})`
        : `WHISPER_MODEL ${modelPath} is not a ggml whisper model (whisper.cpp's ggml-*.bin)`,
    );
  });
}

/**
 * The CPU kernels whisper-cli runs here: the variant a runtime-dispatch build (the worker image's,
 * scripts/build-whisper.sh WHISPER_CPU_VARIANTS=all) loads on this host, or a fixed build's own
 * instruction sets; an operator reads from it whether this host gets the AVX-512 kernels. Never fatal.
 */
async function logEngineCpu(config: WorkerConfig, logger: Logger): Promise<void> {
  const cpu = await probeEngineCpu(config.whisper.binaryPath);
  logger.info(
    { isa: cpu.isa, variant: cpu.variant, features: cpu.features.join(' '), source: cpu.source },
    'engine CPU',
  );
}

/** WHISPER_VAD=on without its model would fail every job: the worker does not start. */
async function checkVadModel(config: WorkerConfig): Promise<void> {
  const vad = config.whisper.vad;
  if (!vad) return;
  await access(vad.modelPath, constants.R_OK).catch(() => {
    throw new Error(
      `WHISPER_VAD is on but its model ${vad.modelPath} cannot be read (make it with scripts/vad-model.sh, or set WHISPER_VAD_MODEL)`,
    );
  });
}

/**
 * The quantised model (WHISPER_QUANTIZE), made from the configured one on the first start and
 * checked on every start (`prepareModel`). A failure to make it whole is logged and the
 * configured model runs instead: slower, never broken.
 */
async function prepareEngineModel(config: WorkerConfig, logger: Logger): Promise<string> {
  const { modelPath, quantize, quantizeBin, modelCacheDir } = config.whisper;
  const started = Date.now();
  try {
    const prepared = await prepareModel({ modelPath, quantize, quantizeBin, cacheDir: modelCacheDir });
    const fields = { model: prepared.path, outcome: prepared.outcome, ms: Date.now() - started };
    // A kept copy that failed its check (cut short by a full disk, say) was made again.
    if (prepared.rejected) logger.warn({ ...fields, rejected: prepared.rejected }, 'engine model');
    else logger.info(fields, 'engine model');
    return prepared.path;
  } catch (error) {
    logger.warn(
      { err: (error as Error).message, model: modelPath, quantize },
      'quantising the model failed: running it as it is',
    );
    return modelPath;
  }
}

/**
 * The model's `-dtw` preset for DTW word timestamps (WHISPER_WORD_TIMESTAMPS), from its header.
 * A model without one (a shape OpenAI published no alignment heads for, or large v1/v2, which
 * share a shape) times words from tokens, as does a header that cannot be read: logged, never fatal.
 */
async function modelDtwPreset(config: WorkerConfig, logger: Logger): Promise<string | null> {
  const { modelPath, wordTimestamps } = config.whisper;
  if (wordTimestamps === 'tokens') return null;
  const preset = await dtwPreset(modelPath).catch((error: unknown) => {
    logger.warn({ err: (error as Error).message, model: modelPath }, 'could not read the model header');
    return null;
  });
  if (preset) logger.info({ preset }, 'DTW word timestamps available');
  else
    logger.warn({ model: modelPath }, 'no DTW alignment heads known for this model: words timed from tokens');
  return preset;
}

main().catch((err: unknown) => {
  console.error(
    JSON.stringify({
      level: 'fatal',
      app: 'worker',
      msg: 'worker failed to start',
      err: (err as Error).message,
    }),
  );
  process.exit(1);
});
