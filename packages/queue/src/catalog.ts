/**
 * The job catalog: every queue, its job payload and retry policy, in one place. Producers and
 * workers import it, so a queue without a handler or a malformed payload fails to compile.
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
}

export interface JobPayloads {
  transcribe: TranscribeJob;
  webhook: WebhookJob;
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

/** Job id of the automatic webhook attempt `attempt` for a transcript (repeats collapse). */
export function webhookJobId(transcriptId: string, attempt: number): string {
  return `${transcriptId}-attempt-${attempt}`;
}
