export { loadWorkerConfig, type WorkerConfig, type WhisperConfig, type QueueTuning } from './config';
export { startWorker, type RunningWorker, type WorkerDeps } from './worker';
export { createTranscribeHandler, type JobOutcome, type TranscribeJobDeps } from './transcribe.job';
export { sweepRetention, type RetentionSweepResult, type SweepDeps } from './sweepers/retention.sweeper';
export {
  sweepOrphanBlobs,
  sweepUploads,
  type UploadSweepDeps,
  type UploadSweepResult,
} from './sweepers/upload.sweeper';
export { withSweepLock, sweepLockKey } from './sweepers/sweep-lock';
export { TranscriptFailure, toFailure, type FailureCode } from './failures';
export { buildContent, utterancesFromWords, UTTERANCE_PAUSE_SECONDS } from './transcript-content';
export { createLogger } from './logger';
export { reconcile, type ReconcileDeps } from './sweepers/reconciler.sweeper';
export { WorkerMetrics, type JobRunOutcome } from './metrics';
