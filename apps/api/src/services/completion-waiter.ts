import type { Redis } from 'ioredis';

/**
 * Wakes `GET /v1/transcripts/{id}?wait=` the moment a worker (or a cancel) finishes the
 * transcript: one Redis subscriber connection per API process, fanned out in memory.
 */
export class CompletionWaiter {
  private readonly waiters = new Map<string, Set<() => void>>();
  private ready: Promise<unknown> | null = null;

  constructor(
    private readonly subscriber: Redis,
    private readonly channel: string,
  ) {
    subscriber.on('message', (_ch: string, id: string) => {
      const set = this.waiters.get(id);
      if (!set) return;
      this.waiters.delete(id);
      for (const wake of set) wake();
    });
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
    const timer = setTimeout(wake, ms);
    const cancel = () => {
      clearTimeout(timer);
      set.delete(wake);
      if (set.size === 0 && this.waiters.get(id) === set) this.waiters.delete(id);
      wake();
    };
    void done.then(() => clearTimeout(timer));
    return { done, cancel };
  }

  async close(): Promise<void> {
    for (const set of this.waiters.values()) for (const wake of set) wake();
    this.waiters.clear();
    // quit() can fail (no connection yet, and no offline queue) after starting to connect: a
    // client left like that would hold its socket open, so it is disconnected instead.
    await this.subscriber.quit().catch(() => this.subscriber.disconnect());
  }
}
