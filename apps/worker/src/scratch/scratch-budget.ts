import { type TranscriptFailure, failure } from '../failures';

/**
 * The working space one job may fill in its folder (`HARK_JOB_SCRATCH_BYTES`): the audio's copy
 * (a download, or an upload fetched from S3; an upload linked from the local store takes none)
 * and the decoded WAV, counted as each is made. A job that would pass it fails
 * `audio_too_large` at once, before the bytes are written, and is not charged: so N jobs at once
 * need at most N budgets of disk, and one caller's file cannot fill the folder others share.
 */
export class ScratchBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  /** Bytes still free. */
  get left(): number {
    return Math.max(0, this.limit - this.used);
  }

  /** Counts `bytes` as written; throws the job's failure when they do not fit. */
  take(bytes: number): void {
    if (bytes > this.left) throw this.exceeded();
    this.used += bytes;
  }

  /** Throws the job's failure unless `bytes` more would fit. */
  check(bytes: number): void {
    if (bytes > this.left) throw this.exceeded();
  }

  exceeded(): TranscriptFailure {
    return failure(
      'audio_too_large',
      false,
      `The audio needs more working space than this service allows for one transcription (${this.limit} bytes).`,
    );
  }
}
