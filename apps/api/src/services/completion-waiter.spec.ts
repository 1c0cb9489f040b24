import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { CompletionWaiter } from './completion-waiter';

/** A subscriber stand-in: 'message' events, and quit/disconnect as ioredis has them. */
class FakeSubscriber extends EventEmitter {
  disconnected = false;
  constructor(private readonly quitFails: boolean) {
    super();
  }
  quit(): Promise<string> {
    return this.quitFails ? Promise.reject(new Error("Stream isn't writeable")) : Promise.resolve('OK');
  }
  disconnect(): void {
    this.disconnected = true;
  }
}

describe('CompletionWaiter', () => {
  it('wakes the waiters of a finished transcript, and only those', async () => {
    const sub = new FakeSubscriber(false);
    const waiter = new CompletionWaiter(sub as unknown as Redis, 'done');
    const a = waiter.wait('a', 60_000);
    const b = waiter.wait('b', 60_000);
    let bWoke = false;
    void b.done.then(() => (bWoke = true));
    sub.emit('message', 'done', 'a');
    await a.done;
    await Promise.resolve();
    expect(bWoke).toBe(false);
    b.cancel();
    await b.done;
    await waiter.close();
  });

  it('close ends a subscriber whose quit fails (it may be connecting), so no socket is left open', async () => {
    const failing = new FakeSubscriber(true);
    await new CompletionWaiter(failing as unknown as Redis, 'done').close();
    expect(failing.disconnected).toBe(true);
    const quitting = new FakeSubscriber(false);
    await new CompletionWaiter(quitting as unknown as Redis, 'done').close();
    expect(quitting.disconnected).toBe(false);
  });
});
