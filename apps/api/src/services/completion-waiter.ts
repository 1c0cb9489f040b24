import type { Redis } from 'ioredis';

/**
 * Wakes `GET /v1/transcripts/{id}?wait=` the moment a worker (or a cancel) finishes the
 * transcript: one Redis subscriber connection per API process, fanned out in memory.
 */
export class CompletionWaiter {
  private readonly waiters = new Map<string, Set<() => void>>();
  private ready: Promise<unknown> | null = null;

  /**
   * `draining`: aborted when the API begins draining for shutdown; every wait then ends at once
   * (the request answers the transcript as it stands, still processing), those already waiting
   * and those that begin later, so no long-poll holds the shutdown up to its grace period.
   */
  constructor(
    private readonly subscriber: Redis,
    private readonly channel: string,
    private readonly draining?: AbortSignal,
  ) {
    subscriber.on('message', (_ch: string, id: string) => {
      const set = this.waiters.get(id);
      if (!set) return;
      this.waiters.delete(id);
      for (const wake of set) wake();
    });
    draining?.addEventListener('abort', () => this.wakeAll(), { once: true });
  }

  /** Subscribes once, lazily; callers await it before checking the row so no wake is missed. */
  start(): Promise<unknown> {
    this.ready ??= this.subscriber.subscribe(this.channel).catch((err: unknown) => {
      this.ready = null; // try again on the next request
      throw err;
    });
    return this.ready;
  }

  /**
   * Returns a promise that resolves on the transcript's completion or after `ms`, whichever is
   * first, and a `cancel` to drop the registration (request closed).
   */
  wait(id: string, ms: number): { done: Promise<void>; cancel(): void } {
    let wake!: () => void;
    const done = new Promise<void>((resolve) => (wake = resolve));
    const set = this.waiters.get(id) ?? new Set();
    set.add(wake);
    this.waiters.set(id, set);
    const timer = setTimeout(wake, this.draining?.aborted ? 0 : ms);
    const cancel = () => {
      clearTimeout(timer);
      set.delete(wake);
      if (set.size === 0 && this.waiters.get(id) === set) this.waiters.delete(id);
      wake();
    };
    void done.then(() => clearTimeout(timer));
    return { done, cancel };
  }

  private wakeAll(): void {
    for (const set of this.waiters.values()) for (const wake of set) wake();
    this.waiters.clear();
  }

  async close(): Promise<void> {
    this.wakeAll();
    // quit() can fail (no connection yet, and no offline queue) after starting to connect: a
    // client left like that would hold its socket open, so it is disconnected instead.
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
  }
}
