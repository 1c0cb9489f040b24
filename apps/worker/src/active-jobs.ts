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
 */
export class ActiveJobs {
  private readonly entries = new Map<string, Entry>();

  /** Registers a job before its row is read, so a cancel published meanwhile is not missed. */
  begin(transcriptId: string): AbortSignal {
    this.entries.get(transcriptId)?.release();
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const controller = new AbortController();
    this.entries.set(transcriptId, { controller, released, release });
    return controller.signal;
  }

  /** The job no longer runs here. */
  end(transcriptId: string, signal: AbortSignal): void {
    const entry = this.entries.get(transcriptId);
    // A job id repeated after a hand-back must not end its successor's registration.
    if (!entry || entry.controller.signal !== signal) return;
    this.entries.delete(transcriptId);
    entry.release();
  }

  /** Aborts the job for a canceled transcript; false when it does not run here. */
  cancel(transcriptId: string): boolean {
    const entry = this.entries.get(transcriptId);
    if (!entry) return false;
    entry.controller.abort(new JobAbort('canceled'));
    return true;
  }

  /** Aborts every job so it can be handed back; resolves once each has let go. */
  async handBackAll(): Promise<number> {
    const entries = [...this.entries.values()];
    for (const e of entries) e.controller.abort(new JobAbort('hand_back'));
    await Promise.all(entries.map((e) => e.released));
    return entries.length;
  }

  /** Resolves when no job runs here any more, or after `ms`; true when idle. */
  async idle(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    const drained = (async () => {
      while (this.entries.size > 0) await Promise.all([...this.entries.values()].map((e) => e.released));
      return true as const;
    })();
    try {
      return await Promise.race([drained, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
