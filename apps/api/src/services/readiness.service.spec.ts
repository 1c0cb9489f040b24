import { EventEmitter } from 'node:events';
import type { Db } from '@hark/db';
import type { Redis } from 'ioredis';
import pino from 'pino';
import { ReadinessService } from './readiness.service';

/** A Redis stand-in: `status` and the 'ready' event, as ioredis has them. */
class FakeRedis extends EventEmitter {
  constructor(
    public status: string,
    private readonly pong = true,
  ) {
    super();
  }
  ping(): Promise<string> {
    return this.pong ? Promise.resolve('PONG') : new Promise(() => {});
  }
}

const log = pino({ level: 'silent' });
const db = (answers: boolean) =>
  ({
    $queryRaw: () => (answers ? Promise.resolve([{ '?column?': 1 }]) : new Promise(() => {})),
  }) as unknown as Db;
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('ReadinessService', () => {
  it('answers true for both when they answer, and leaves no timer behind', async () => {
    const before = timers();
    const service = new ReadinessService(db(true), new FakeRedis('ready') as unknown as Redis);
    await expect(service.check(log)).resolves.toEqual({ postgres: true, redis: true });
    expect(timers()).toBeLessThanOrEqual(before);
  });

  it('answers false for what does not answer in time, without keeping a listener or a timer per probe', async () => {
    const redis = new FakeRedis('reconnecting');
    const service = new ReadinessService(db(false), redis as unknown as Redis, 20);
    const before = timers();
    for (let i = 0; i < 15; i++)
      await expect(service.check(log)).resolves.toEqual({ postgres: false, redis: false });
    // A probe every few seconds through a Redis outage must not pile up 'ready' listeners.
    expect(redis.listenerCount('ready')).toBe(0);
    expect(timers()).toBeLessThanOrEqual(before);
  });

  it('waits for Redis that becomes ready within the time, then pings it', async () => {
    const redis = new FakeRedis('connecting');
    const service = new ReadinessService(db(true), redis as unknown as Redis, 1000);
    const result = service.check(log);
    setTimeout(() => {
      redis.status = 'ready';
      redis.emit('ready');
    }, 10);
    await expect(result).resolves.toEqual({ postgres: true, redis: true });
    expect(redis.listenerCount('ready')).toBe(0);
  });

  it('a ready Redis that does not answer its ping is not ready', async () => {
    const service = new ReadinessService(db(true), new FakeRedis('ready', false) as unknown as Redis, 20);
    await expect(service.check(log)).resolves.toEqual({ postgres: true, redis: false });
  });
});
