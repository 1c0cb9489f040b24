import { newId } from '@hark/core';

/**
 * The job catalog: every queue, its job payload, options, job id rule and retry policy, in one
 * place. Producers (`createQueues`) and consumers (`startConsumer`) are typed from it, so a
 * malformed payload or a handler of the wrong job fails to compile.
 * Payloads carry ids only: Postgres is the truth, and no key, secret or content enters Redis.
 */
export const QUEUES = {
  /** Transcription: fetch, probe, decode, transcribe, diarize, charge. */
  transcribe: 'transcribe',
  /** Completion notices to webhookUrl. */
  webhook: 'webhook',
} as const;

export type QueueName = (typeof QUEUES)[keyof typeof QUEUES];

export interface TranscribeJob {
  transcriptId: string;
}

export interface WebhookJob {
  transcriptId: string;
  /** Automatic attempt number this job sends (1-based). */
  attempt: number;
  /**
   * A caller's replay (POST /v1/transcripts/{id}/webhook-deliveries): sent once, never retried,
   * `attempt` ignored (0). The dispatcher numbers it when it records it, after every attempt
   * recorded so far; the job id is the id of its delivery record.
   */
  manual?: boolean;
}

/** Why a webhook job sent nothing. */
export type WebhookSkipReason =
  /** No such transcript, or deleted / expired. */
  | 'gone'
  /** Created without `webhookUrl`. */
  | 'no_webhook'
  /** Still `processing`, or `canceled` (cancels are never notified). */
  | 'not_finished'
  /** An earlier attempt (a replay, say) was acknowledged: the automatic schedule stops. */
  | 'acknowledged';

/** What a webhook job returns (kept by BullMQ, ids only); a replay's caller reads it. */
export type WebhookJobResult =
  | {
      status: 'recorded';
      /** The delivery record of this attempt. */
      deliveryId: string;
      /** Its attempt number, counted over automatic and manual attempts. */
      attempt: number;
      delivered: boolean;
      /** False when a re-run found the attempt already recorded and sent nothing again. */
      sent: boolean;
    }
  | { status: 'skipped'; reason: WebhookSkipReason };

/** What each queue's jobs carry. */
export interface JobPayloads {
  transcribe: TranscribeJob;
  webhook: WebhookJob;
}

/** How a transcribe job ended without throwing (kept by BullMQ; metrics count it). */
export type TranscribeJobResult = 'done' | 'canceled' | 'missing' | 'already_finished';

/** What each queue's handler returns. */
export interface JobResults {
  transcribe: TranscribeJobResult;
  webhook: WebhookJobResult;
}

/**
 * Transcription retries: 3 attempts with exponential backoff 5 s, 10 s (worst case ~15 s of
 * waiting plus three runs) before `engine_failed`.
 */
export const TRANSCRIBE_JOB_OPTIONS = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 5_000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 24 * 3600 },
} as const;

/**
 * A webhook job is one automatic attempt: the dispatcher schedules attempt N+1 itself as a new
 * delayed job (`webhookJobId(id, N + 1)`). Finished jobs are kept a day, so a repeated enqueue
 * of the same attempt (a transcribe job run twice) collapses instead of sending twice.
 */
export const WEBHOOK_JOB_OPTIONS = {
  attempts: 1,
  removeOnComplete: { age: 24 * 3600 },
  removeOnFail: { age: 7 * 24 * 3600 },
} as const;

/**
 * A replay is one attempt made at once while the caller waits: LIFO puts it ahead of waiting
 * automatic attempts (a BullMQ `priority` would put it behind them: un-prioritised jobs go
 * first). Kept an hour after it finishes, which is long enough for the API to read the result.
 */
export const WEBHOOK_REPLAY_JOB_OPTIONS = {
  attempts: 1,
  lifo: true,
  removeOnComplete: { age: 3600 },
  removeOnFail: { age: 24 * 3600 },
} as const;

/** Redis pub/sub channel on which a transcript's completion wakes `GET ?wait=` requests. */
export function transcriptDoneChannel(prefix: string): string {
  return `${prefix}:transcript-finished`;
}

/** Redis pub/sub channel telling workers to abort a transcript's job at once (cancel). */
export function transcriptCancelChannel(prefix: string): string {
  return `${prefix}:transcript-cancel`;
}

/** BullMQ key prefix under the deployment's Redis prefix. */
export function bullPrefix(prefix: string): string {
  return `${prefix}:bull`;
}

/** Job id of a transcribe job: the transcript id, so a repeated enqueue collapses. */
export function transcribeJobId(transcriptId: string): string {
  return transcriptId;
}

/** Job id of the automatic webhook attempt `attempt` for a transcript (repeats collapse). */
export function webhookJobId(transcriptId: string, attempt: number): string {
  return `${transcriptId}-attempt-${attempt}`;
}

/** Job id of a replay: a fresh delivery id, which becomes its delivery record's id. */
export function replayJobId(): string {
  return newId('whd');
}

/** The part of a BullMQ job that says where it stands in its attempts. */
export interface AttemptState {
  attemptsMade: number;
  opts: { attempts?: number };
}

/** Whether the run of `job` now under way is its last: failing it fails the job for good. */
export function isLastTranscribeAttempt(job: AttemptState): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

/**
 * Whether a transcribe job that failed with `err` will not run again: an `UnrecoverableError`,
 * or every attempt made (BullMQ counted the failed one already).
 */
export function transcribeFailedForGood(job: AttemptState, err: Error): boolean {
  return err.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
}

/** The transcript of an automatic attempt's job id (for logs); undefined for a replay's. */
export function transcriptIdOfWebhookJob(jobId: string): string | undefined {
  return /^(.+)-attempt-\d+$/.exec(jobId)?.[1];
}
