import { waitFor } from '@hark/testing';
import { type Reply, dispatcherTest, signatureValid } from './dispatcher-env';

// The built dispatcher (apps/webhook-dispatcher/dist/main.js) as a real process: readiness log,
// SIGTERM, and a SIGKILL in the middle of a send. Locks and the stalled check are shortened
// through config so a dead process's job is picked up again within about 2 s.
jest.setTimeout(60_000);

const h = dispatcherTest({
  HARK_JOB_LOCK_MS: '2000',
  HARK_STALLED_INTERVAL_MS: '500',
  HARK_WEBHOOK_SCHEDULE_MS: '0,500',
});
const dispatcher = () => h.startProcess();
const receiver = (reply: (i: number) => Reply) => h.receiver(reply);

const records = (id: string, n: number) =>
  waitFor(async () => ((await h.deliveries(id)).length >= n ? h.deliveries(id) : null), {
    timeout: 15_000,
    message: `${n} records`,
  });

it('SIGKILL mid-send: another dispatcher re-runs the attempt; a duplicate with the same delivery id, never a lost notice', async () => {
  const first = await dispatcher();
  // The first request is held open while its sender dies; the re-sent one is answered.
  const rx = await receiver((i) => (i === 0 ? 'hang' : { status: 200, body: 'ok' }));
  const id = await h.transcript(rx.url);
  await h.finish(id);
  await rx.received(1);
  first.kill('SIGKILL');
  expect(await first.exited).toBe('SIGKILL');
  expect(await h.deliveries(id)).toEqual([]);

  const second = await dispatcher();
  const [a, b] = await rx.received(2, 20_000);
  expect([a!.headers['hark-delivery-id'], b!.headers['hark-delivery-id']]).toEqual([
    `whd_${id}`,
    `whd_${id}`,
  ]);
  expect(signatureValid(b!, h.account.apiKey).valid).toBe(true);
  const [record] = await records(id, 1);
  expect(record).toMatchObject({ attempt: 1, delivered: true, manual: false, statusCode: 200 });
  second.kill('SIGTERM');
  expect(await second.exited).toBe(0);
  expect(rx.requests).toHaveLength(2);
});

it('SIGTERM during a send: the send finishes and is recorded, then exit 0', async () => {
  const p = await dispatcher();
  const rx = await receiver(() => ({ status: 200, body: 'ok', delayMs: 1500 }));
  const id = await h.transcript(rx.url);
  await h.finish(id);
  await rx.received(1);
  const signaled = Date.now();
  p.kill('SIGTERM');
  expect(await p.exited).toBe(0);
  expect(Date.now() - signaled).toBeGreaterThanOrEqual(1000);
  expect((await h.deliveries(id)).map((r) => [r.attempt, r.delivered])).toEqual([[1, true]]);
  expect(p.logs.map((l) => l.msg)).toEqual(
    expect.arrayContaining([
      'dispatcher ready',
      'shutting down: finishing in-flight sends',
      'notice sent',
      'stopped',
    ]),
  );
  // Never the webhook URL (it can carry credentials) nor the key or its signing secret.
  const logText = JSON.stringify(p.logs);
  expect(logText).not.toContain('hook?team=qa');
  expect(logText).not.toContain(h.account.apiKey);
});
