import {
  type TranscribeProducer,
  catalogQueue,
  transcriptCancelChannel,
  transcriptDoneChannel,
  transcribeProducer,
} from '@hark/queue';
import type { Redis } from 'ioredis';

/** The API's side of the queues: enqueue work, announce cancels and completions. Ids only. */
export class TranscriptQueue {
  private readonly transcribe: TranscribeProducer;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    this.transcribe = transcribeProducer(catalogQueue('transcribe', redis, prefix));
  }

  /**
   * Enqueues the transcripts a feed marked queued (`feedAccount`), oldest first. jobId =
   * transcript id: a repeated enqueue of the same transcript collapses.
   */
  async enqueue(transcriptIds: readonly string[]): Promise<void> {
    await this.transcribe.enqueueMany(transcriptIds);
  }

  /** Tells workers to stop the job now, drops it if still waiting, and wakes waiters. */
  async canceled(transcriptId: string): Promise<void> {
    await this.redis.publish(transcriptCancelChannel(this.prefix), transcriptId);
    const job = await this.transcribe.queue.getJob(transcriptId);
    if (job && !(await job.isActive())) await job.remove().catch(() => undefined);
    await this.redis.publish(transcriptDoneChannel(this.prefix), transcriptId);
  }

  close(): Promise<void> {
    return this.transcribe.queue.close();
  }
}
