import type { Db } from '@hark/db';
import { type TranscribeJob, type TranscribeJobResult, isLastTranscribeAttempt } from '@hark/queue';
import { completeTranscript, failTranscript, markStarted } from '@hark/transcripts';
import { type Job, UnrecoverableError } from 'bullmq';
import type { Logger } from 'pino';
import { type ActiveJobs, JobAbort } from './active-jobs';
import { type AudioSourceDeps, fetchAudio } from './audio-source';
import { type AnnounceDeps, announceFinished } from './completion';
import { describeForLog, toFailure } from './failures';
import type { JobRunOutcome } from './metrics';
import { type PipelineDeps, runPipeline } from './pipeline';
import { ScratchBudget } from './scratch/scratch-budget';
import type { JobFolder, ScratchSpace } from './scratch/scratch-space';
import { parseGlossary, parseSpeakers } from './transcript-content';

export interface TranscribeJobDeps {
  db: Db;
  active: ActiveJobs;
  audio: AudioSourceDeps;
  pipeline: Omit<PipelineDeps, 'log'>;
  announce: AnnounceDeps;
  /** The worker's scratch folder: each run's own folder, and what dead runs left. */
  scratch: ScratchSpace;
  /** The most bytes one job may write there (`HARK_JOB_SCRATCH_BYTES`, see `ScratchBudget`). */
  scratchBytes: number;
  logger: Logger;
  /** Told how each run ended and how long it took (WorkerMetrics). */
  metrics?: { jobFinished(outcome: JobRunOutcome, seconds: number): void };
  /**
   * Feeds the account's next held transcripts into the queue (`feedAccount`); called when a job
   * starts (it no longer waits, so the account's next one may) and when it ends. Never throws.
   */
  feed?(accountId: string): Promise<void>;
}

/** How a job ended here (BullMQ stores it as the return value; handy in tests and logs). */
/** How a job ended without throwing: the catalog's result of a transcribe job. */
export type JobOutcome = TranscribeJobResult;

/** Returned by a job handed back at shutdown: the handler never settles (see `handBack`). */
const PARKED = Symbol('parked');

/**
 * The `transcribe` job. Guards first (row gone or no longer processing: nothing to do), then
 * audio -> pipeline -> completeTranscript -> announce. Failures: the caller's (`audio_*`,
 * `insufficient_balance`) fail the transcript at once and stop BullMQ's retries; anything else
 * is retried and fails `engine_failed` on the last attempt. Every transition can lose to a
 * cancel, which ends the job quietly: nothing recorded, nothing charged.
 */
export function createTranscribeHandler(deps: TranscribeJobDeps) {
  return async (job: Job<TranscribeJob>, token?: string): Promise<JobOutcome> => {
    const id = job.data.transcriptId;
    const log = deps.logger.child({ transcriptId: id, jobId: job.id, attempt: job.attemptsMade + 1 });
    // Registered before the row is read, so a cancel published in between still aborts us.
    const signal = deps.active.begin(id);
    const started = performance.now();
    const finished = (how: JobRunOutcome) =>
      deps.metrics?.jobFinished(how, (performance.now() - started) / 1000);
    let outcome: JobOutcome | typeof PARKED | undefined;
    const ran: RunContext = { accountId: null };
    try {
      outcome = await runJob(deps, job, token, log, signal, ran);
    } catch (error) {
      const lastAttempt = isLastTranscribeAttempt(job);
      finished(error instanceof UnrecoverableError || lastAttempt ? 'failed' : 'retried');
      throw error;
    } finally {
      // Ended: feed again, in case the feed at the start failed (the reconciler is the backstop).
      // Before `end`, so a shutdown waiting for idle jobs does not close the queue under it.
      if (ran.accountId !== null && outcome !== PARKED) await deps.feed?.(ran.accountId);
      deps.active.end(id, signal, outcome === PARKED);
    }
    finished(outcome === PARKED ? 'handed_back' : outcome);
    // Handed back to the queue: BullMQ must neither complete nor fail it, and the shutdown
    // force-closes the worker next, so this promise is abandoned rather than settled.
    if (outcome === PARKED) return new Promise<never>(() => undefined);
    return outcome;
  };
}

/** What a run found out that the handler needs afterwards. */
interface RunContext {
  /** Set once the job started the transcript. */
  accountId: string | null;
}

async function runJob(
  deps: TranscribeJobDeps,
  job: Job<TranscribeJob>,
  token: string | undefined,
  log: Logger,
  signal: AbortSignal,
  ran: RunContext,
): Promise<JobOutcome | typeof PARKED> {
  const { db } = deps;
  const id = job.data.transcriptId;
  // Fetched while this worker was already shutting down.
  if (signal.aborted) return stopped(deps, job, token, log, signal.reason);
  // Whatever an earlier run of this job left (a killed worker: the caller's audio, the WAV, the
  // engine's output) goes now, before the guards: a transcript finished or erased meanwhile
  // must not keep its audio on this disk.
  const leftovers = await deps.scratch.removeLeftovers(id);
  if (leftovers > 0) log.info({ folders: leftovers }, 'removed what an earlier run left');
  const t = await db.transcript.findUnique({
    where: { id },
    select: {
      status: true,
      url: true,
      uploadId: true,
      requestedLanguage: true,
      speakers: true,
      glossary: true,
      webhookUrl: true,
      task: true,
      prompt: true,
      temperature: true,
    },
  });
  if (!t) {
    log.warn('transcript not found; nothing to do');
    return 'missing';
  }
  if (t.status !== 'processing') {
    // A re-run after the transition committed but before the announcement went out: repeat it.
    if (t.status === 'done' || t.status === 'failed') await announceFinished(deps.announce, id, t.webhookUrl);
    log.info({ status: t.status }, 'transcript already finished; nothing to do');
    return 'already_finished';
  }
  const started = await markStarted(db, id);
  if (started) {
    ran.accountId = started.accountId;
    // This job no longer waits in the queue: the account's next held transcript may.
    await deps.feed?.(started.accountId);
  }

  let folder: JobFolder | null = null;
  try {
    // The job's audio (download, decoded WAV) is readable by this service's user only.
    folder = await deps.scratch.claim(id);
    const workDir = folder.path;
    const budget = new ScratchBudget(deps.scratchBytes);
    log.info({ source: t.url ? 'url' : 'upload' }, 'transcription started');
    const audioPath = await fetchAudio(deps.audio, t, workDir, signal, budget);
    const result = await runPipeline(
      { ...deps.pipeline, log },
      {
        transcriptId: id,
        audioPath,
        workDir,
        budget,
        requestedLanguage: t.requestedLanguage,
        speakers: parseSpeakers(t.speakers),
        glossary: parseGlossary(t.glossary),
        engineOptions: {
          task: t.task === 'translate' ? 'translate' : 'transcribe',
          prompt: t.prompt,
          temperature: t.temperature,
        },
        signal,
      },
    );
    if (result.status === 'not_processing' || !(await completeTranscript(db, id, result.completion))) {
      log.info('transcript left processing meanwhile (canceled); nothing recorded');
      return 'canceled';
    }
    log.info(
      { durationSeconds: result.completion.durationSeconds, language: result.completion.language },
      'transcript done',
    );
    await announceFinished(deps.announce, id, t.webhookUrl);
    return 'done';
  } catch (error) {
    if (signal.aborted) return await stopped(deps, job, token, log, signal.reason);
    return await failed(deps, job, log, error, t.webhookUrl);
  } finally {
    await folder?.release();
  }
}

/** Aborted: a cancel (return quietly) or a shutdown past its grace period (hand the job back). */
async function stopped(
  deps: TranscribeJobDeps,
  job: Job<TranscribeJob>,
  token: string | undefined,
  log: Logger,
  reason: unknown,
): Promise<JobOutcome | typeof PARKED> {
  const id = job.data.transcriptId;
  if (reason instanceof JobAbort && reason.kind === 'hand_back') {
    // Straight back to `wait`, lock released: another worker starts it at once, and neither an
    // attempt nor a stall is counted. Without a token (or Redis), stall recovery takes over.
    if (token)
      await job
        .moveToWait(token)
        .catch((e: unknown) =>
          log.warn(describeForLog(e), 'hand-back failed; stall recovery will pick the job up'),
        );
    log.info('job handed back at shutdown');
    return PARKED;
  }
  const row = await deps.db.transcript.findUnique({ where: { id }, select: { status: true } });
  if (row?.status === 'processing') throw new Error('job aborted while the transcript is still processing');
  log.info('transcript canceled; stopped');
  return 'canceled';
}

async function failed(
  deps: TranscribeJobDeps,
  job: Job<TranscribeJob>,
  log: Logger,
  error: unknown,
  webhookUrl: string | null,
): Promise<never> {
  const failure = toFailure(error);
  const lastAttempt = isLastTranscribeAttempt(job);
  if (failure.retryable && !lastAttempt) {
    log.warn({ code: failure.code, ...describeForLog(error) }, 'attempt failed; BullMQ will retry');
    throw error;
  }
  const id = job.data.transcriptId;
  const ended = await failTranscript(deps.db, id, failure.code, failure.message);
  log.warn({ code: failure.code, recorded: ended, ...describeForLog(error) }, 'transcript failed');
  if (ended) await announceFinished(deps.announce, id, webhookUrl);
  throw new UnrecoverableError(failure.message);
}
