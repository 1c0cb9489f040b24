import { startApp } from '@hark/testing';

// Redis unreachable when a process starts (ops audit): the worker and the dispatcher waited for
// ever, logging several lines a second, and exited 143 on SIGTERM; the API exited at once with an
// error that did not name REDIS_URL. Now each waits HARK_START_TIMEOUT_MS with a log line
// every 10 s at most, then exits 1 naming REDIS_URL (never its password); SIGTERM meanwhile
// exits 0. The built processes, as production runs them.
jest.setTimeout(60_000);

const UNREACHABLE = {
  REDIS_URL: 'redis://:R3disPW@127.0.0.1:1',
  HARK_START_TIMEOUT_MS: '3000',
  PORT: '0',
};
const APPS = ['api', 'worker', 'webhook-dispatcher'] as const;

it.each(APPS)('%s: waits for Redis, then exits 1 naming REDIS_URL, in few log lines', async (app) => {
  const started = Date.now();
  const p = startApp(app, UNREACHABLE);
  expect(await p.exited).toBe(1);
  expect(Date.now() - started).toBeGreaterThan(2500);
  const text = JSON.stringify(p.logs);
  expect(text).toMatch(/REDIS_URL/);
  expect(text).not.toContain('R3disPW');
  expect(p.logs.filter((l) => /redis|worker error/i.test(String(l.msg))).length).toBeLessThan(5);
});

it.each(APPS)('%s: SIGTERM while it waits for Redis exits 0', async (app) => {
  const p = startApp(app, { ...UNREACHABLE, HARK_START_TIMEOUT_MS: '30000' });
  // Signalled once it is waiting (its first Redis error logged), not after a fixed time: on a
  // loaded machine loading the bundle alone took longer than 1.5 s, and a SIGTERM before the
  // process has started anything is the platform's default exit, not this wait's.
  const waiting = Date.now();
  while (!p.logs.some((l) => /redis/i.test(JSON.stringify(l))) && Date.now() - waiting < 20_000)
    await new Promise((r) => setTimeout(r, 50));
  p.child.kill('SIGTERM');
  expect(await p.exited).toBe(0);
});
