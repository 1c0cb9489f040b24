/** Why a running job was aborted: the caller canceled it, or this worker is shutting down. */
export type AbortCause = 'canceled' | 'hand_back';

/** The abort reason the registry uses, so a handler can tell cancel from shutdown. */
export class JobAbort extends Error {
  override readonly name = 'AbortError';
  constructor(readonly kind: AbortCause) {
    super(kind === 'canceled' ? 'The transcript was canceled' : 'The worker is shutting down');
  }
}

interface Entry {
  controller: AbortController;
  /** Resolves when the job has ended here (finished, failed, canceled or handed back). */
  released: Promise<void>;
  release: () => void;
}

/**
 * The transcripts this process is working on, each with the AbortController that stops its
 * processes. The cancel subscriber aborts one; shutdown aborts all after the grace period.
 *
 * It also knows which jobs BullMQ has not yet recorded a result for (the handler returned,
 * the completion is on its way to Redis), so a shutdown never cuts a finished job's record.
 */
export class ActiveJobs {
  private readonly entries = new Map<string, Entry>();
  private readonly unrecorded = new Set<string>();
  private accepting = true;

  /**
   * Registers a job before its row is read, so a cancel published meanwhile is not missed.
   * Once shutdown has begun, the signal comes back already aborted for hand-back: a job that
   * BullMQ fetched at the last moment goes straight back to the queue.
   */
  begin(transcriptId: string): AbortSignal {
    this.entries.get(transcriptId)?.release();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const controller = new AbortController();
    if (!this.accepting) controller.abort(new JobAbort('hand_back'));
    this.entries.set(transcriptId, { controller, released, release });
    this.unrecorded.add(transcriptId);
    return controller.signal;
  }

  /** The job no longer runs here. `parked`: handed back, so BullMQ will record nothing for it. */
  end(transcriptId: string, signal: AbortSignal, parked = false): void {
    if (parked) this.unrecorded.delete(transcriptId);
    const entry = this.entries.get(transcriptId);
    // A job id repeated after a hand-back must not end its successor's registration.
    if (!entry || entry.controller.signal !== signal) return;
    this.entries.delete(transcriptId);
    entry.release();
  }

  /** BullMQ stored the job's result (completed, or failed with or without a retry to come). */
  recorded(transcriptId: string): void {
    if (!this.entries.has(transcriptId)) this.unrecorded.delete(transcriptId);
  }

  /** Aborts the job for a canceled transcript; false when it does not run here. */
  cancel(transcriptId: string): boolean {
    const entry = this.entries.get(transcriptId);
    if (!entry) return false;
    entry.controller.abort(new JobAbort('canceled'));
    return true;
  }

  /** Shutdown begins: jobs registered from now on are handed back at once. */
  stopAccepting(): void {
    this.accepting = false;
  }

  /** Aborts every job so it can be handed back; resolves once each has let go. */
  async handBackAll(): Promise<number> {
    const entries = [...this.entries.values()];
    for (const e of entries) e.controller.abort(new JobAbort('hand_back'));
    await Promise.all(entries.map((e) => e.released));
    return entries.length;
  }

  /** Resolves true when no job runs here any more, false after `ms`. */
  idle(ms: number): Promise<boolean> {
    return this.until(() => this.entries.size === 0, ms);
  }

  /** Resolves true when BullMQ has recorded the result of every job that ended here, false after `ms`. */
  allRecorded(ms: number): Promise<boolean> {
    return this.until(() => this.entries.size === 0 && this.unrecorded.size === 0, ms);
  }

  get size(): number {
    return this.entries.size;
  }

  // A short poll: shutdown is the only waiter, and these sets change a handful of times per job.
  private async until(done: () => boolean, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!done()) {
      if (Date.now() >= deadline) return false;
      await new Promise((r) => setTimeout(r, 20));
    }
    return true;
  }
}
