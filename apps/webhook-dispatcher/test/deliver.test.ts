import { newId } from '@hark/core';
import { webhookJobId, webhookSchedule } from '@hark/queue';
import { waitFor } from '@hark/testing';
import { deliveryRecord } from '@hark/testing/jest';
import { TRANSCRIPT_SELECT, cancelTranscript, eraseTranscript, transcriptListItem } from '@hark/transcripts';
import { type AttemptResult, type BeginInput, DeliveryStore } from '../src/delivery-store';
import { type Reply, dispatcherTest, signatureValid } from './dispatcher-env';

// The dispatcher in-process on real Postgres and Redis, sending to real receivers on 127.0.0.1
// (ALLOW_PRIVATE_URLS=true). Each test starts its own dispatcher with the settings it needs.
jest.setTimeout(40_000);

/** Two automatic attempts 1.1 s apart (so `t` changes), 1 s send time-out. */
/** What a dispatcher's run of automatic attempt `slot` begins with (a fresh record id each call). */
const automaticBegin = (
  transcriptId: string,
  url: string,
  slot: number,
  startedAt = new Date(),
): BeginInput => ({
  id: newId('whd'),
  transcriptId,
  url,
  manual: false,
  slot,
  startedAt,
});
const FAST = { HARK_WEBHOOK_SCHEDULE_MS: '0,1100', HARK_WEBHOOK_TIMEOUT_MS: '1000' };
const ONCE = { HARK_WEBHOOK_SCHEDULE_MS: '0', HARK_WEBHOOK_TIMEOUT_MS: '1000' };

const h = dispatcherTest();
afterEach(async () => {
  await h.stopDispatchers();
  await h.closeReceivers();
});
const receiver = (reply?: (i: number) => Reply) => h.receiver(reply);

const deliveriesCount = (id: string, n: number, timeout = 15_000) =>
  waitFor(async () => ((await h.deliveries(id)).length >= n ? h.deliveries(id) : null), {
    timeout,
    message: `${n} deliveries`,
  });

/** The result the webhook job for `jobId` finished with. */
const jobResult = (jobId: string) =>
  waitFor(async () => (await h.queue.getJob(jobId))?.returnvalue ?? null, {
    message: `job ${jobId} finished`,
  });

it('done: one signed notice with the decided headers; the body is the bare list item', async () => {
  await h.start(FAST);
  const rx = await receiver();
  const id = await h.transcript(rx.url);
  await h.finish(id);
  await h.enqueueAttempt(id, 1); // the worker announcing twice collapses on the job id
  const [req] = await rx.received(1);
  const [record] = await deliveriesCount(id, 1);
  expect(await jobResult(webhookJobId(id, 1))).toEqual({
    status: 'recorded',
    deliveryId: record!.id,
    attempt: 1,
    delivered: true,
    sent: true,
  });

  expect(req!.method).toBe('POST');
  expect(req!.path).toBe('/hook?team=qa');
  expect(req!.headers['content-type']).toBe('application/json');
  expect(req!.headers['user-agent']).toBe('Hark-Webhooks/1');
  expect(req!.headers['hark-delivery-id']).toBe(`whd_${id}`);
  const sig = signatureValid(req!, h.account.apiKey);
  expect(sig.valid).toBe(true);
  expect(Math.abs(sig.t - Date.now() / 1000)).toBeLessThan(10);

  const body = JSON.parse(req!.body) as Record<string, unknown>;
  const row = await h.db.transcript.findUniqueOrThrow({ where: { id }, select: TRANSCRIPT_SELECT });
  expect(body).toEqual(JSON.parse(JSON.stringify(transcriptListItem(row))));
  expect(body).toMatchObject({
    id,
    status: 'done',
    cost: 0.12,
    durationSeconds: 12,
    externalId: 'ext-1',
    metadata: { team: 'qa' },
    error: null,
  });
  for (const key of ['text', 'words', 'utterances', 'diarizationSegments', 'data', 'webhookUrl'])
    expect(body).not.toHaveProperty(key);
  expect(req!.body).not.toContain('secret words');

  expect(record).toEqual(
    deliveryRecord({
      transcriptId: id,
      url: rx.url,
      attempt: 1,
      delivered: true,
      statusCode: 200,
      responsePreview: 'ok',
      pending: false,
      createdAt: expect.any(Date),
    }),
  );
  expect(rx.requests).toHaveLength(1);
});

it('failed: 500 then 200 makes two records; same delivery id, fresh t and signature', async () => {
  await h.start(FAST);
  const rx = await receiver((i) => (i === 0 ? { status: 500, body: '{"error":"down"}' } : { status: 204 }));
  const id = await h.transcript(rx.url);
  await h.finish(id, 'failed');
  const [first, second] = await rx.received(2);
  const records = await deliveriesCount(id, 2);

  expect(second!.at - first!.at).toBeGreaterThanOrEqual(1100);
  expect(second!.headers['hark-delivery-id']).toBe(first!.headers['hark-delivery-id']);
  const [s1, s2] = [signatureValid(first!, h.account.apiKey), signatureValid(second!, h.account.apiKey)];
  expect(s1.valid && s2.valid).toBe(true);
  expect(s2.t).toBeGreaterThan(s1.t);
  expect(JSON.parse(first!.body)).toMatchObject({
    status: 'failed',
    cost: 0,
    error: { code: 'audio_invalid', message: 'The audio could not be decoded.' },
  });
  expect(
    records.map(({ attempt, delivered, statusCode, error, responsePreview, manual }) => ({
      attempt,
      delivered,
      statusCode,
      error,
      responsePreview,
      manual,
    })),
  ).toEqual([
    {
      attempt: 1,
      delivered: false,
      statusCode: 500,
      error: null,
      responsePreview: '{"error":"down"}',
      manual: false,
    },
    { attempt: 2, delivered: true, statusCode: 204, error: null, responsePreview: '', manual: false },
  ]);
  expect(records[1]!.createdAt.getTime()).toBeGreaterThan(records[0]!.createdAt.getTime());
});

it('a 302 is not delivered and not followed', async () => {
  await h.start(ONCE);
  const rx = await receiver(() => ({ status: 302, headers: { Location: '/elsewhere' }, body: 'moved' }));
  const id = await h.transcript(rx.url);
  await h.finish(id);
  const [record] = await deliveriesCount(id, 1);
  expect(record).toMatchObject({
    attempt: 1,
    delivered: false,
    statusCode: 302,
    error: null,
    responsePreview: 'moved',
  });
  await jobResult(webhookJobId(id, 1));
  expect(rx.requests.map((r) => r.path)).toEqual(['/hook?team=qa']);
});

it('a receiver that never answers is cut at HARK_WEBHOOK_TIMEOUT_MS', async () => {
  await h.start(ONCE);
  const rx = await receiver(() => 'hang');
  const id = await h.transcript(rx.url);
  await h.finish(id);
  const [record] = await deliveriesCount(id, 1);
  expect(record).toMatchObject({
    delivered: false,
    statusCode: null,
    error: 'timeout',
    responsePreview: null,
  });
  expect(record!.durationMs).toBeGreaterThanOrEqual(1000);
  expect(record!.durationMs).toBeLessThan(2500);
});

it('the default time-out is the decided 10 s', async () => {
  await h.start({ HARK_WEBHOOK_SCHEDULE_MS: '0' });
  const rx = await receiver(() => 'hang');
  const id = await h.transcript(rx.url);
  await h.finish(id);
  const [record] = await deliveriesCount(id, 1, 20_000);
  expect(record).toMatchObject({ delivered: false, statusCode: null, error: 'timeout' });
  expect(record!.durationMs).toBeGreaterThanOrEqual(10_000);
  expect(record!.durationMs).toBeLessThan(11_500);
});

it('credentials echoed by the receiver never reach responsePreview', async () => {
  await h.start(ONCE);
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U';
  const echoed = [
    `Authorization: Bearer s3cr3tBearerValue`,
    `{"key":"${h.account.apiKey}","session":"${jwt}"}`,
    'user=ann&password=hunter2',
  ].join('\n');
  const rx = await receiver(() => ({ status: 400, body: echoed }));
  const id = await h.transcript(rx.url);
  await h.finish(id);
  const [record] = await deliveriesCount(id, 1);
  const preview = record!.responsePreview!;
  for (const secret of [
    's3cr3tBearerValue',
    h.account.apiKey,
    h.account.apiKey.slice(3, 20),
    jwt,
    jwt.split('.')[1]!,
    'hunter2',
  ]) {
    expect(preview).not.toContain(secret);
  }
  expect(preview).toContain('[REDACTED]');
  expect(preview).toContain('user=ann');
});

it('sends nothing for canceled transcripts, transcripts without webhookUrl, or deleted ones', async () => {
  await h.start(FAST);
  const rx = await receiver((i) => ({ status: i === 0 ? 503 : 200 }));
  const canceled = await h.transcript(rx.url);
  await cancelTranscript(h.db, canceled);
  await h.enqueueAttempt(canceled, 1);
  const bare = await h.transcript(null);
  await h.finish(bare);
  const deleted = await h.transcript(rx.url);
  await h.finish(deleted);
  await deliveriesCount(deleted, 1);
  // Deleted while attempt 2 waits: it finds the transcript gone.
  await h.db.transcript.update({ where: { id: deleted }, data: { deletedAt: new Date() } });

  expect(await jobResult(webhookJobId(canceled, 1))).toEqual({ status: 'skipped', reason: 'not_finished' });
  expect(await jobResult(webhookJobId(bare, 1))).toEqual({ status: 'skipped', reason: 'no_webhook' });
  expect(await jobResult(webhookJobId(deleted, 2))).toEqual({ status: 'skipped', reason: 'gone' });
  expect(rx.requests).toHaveLength(1);
  expect(await h.deliveries(canceled)).toEqual([]);
  expect(await h.deliveries(bare)).toEqual([]);
});

it('sends nothing for a transcript past its retention before the sweep erased it: automatic attempts and replays are gone', async () => {
  // The API answers 404 for it from the moment expiresAt passes; notices used to go on until
  // the sweep set deletedAt.
  await h.start(FAST);
  const rx = await receiver((i) => ({ status: i === 0 ? 503 : 200 }));
  const retried = await h.transcript(rx.url);
  await h.finish(retried);
  await deliveriesCount(retried, 1);
  // Expires while attempt 2 waits.
  await h.db.transcript.update({ where: { id: retried }, data: { expiresAt: new Date(Date.now() - 1) } });
  // Expired while it was processing, then finished: attempt 1 too.
  const expiredAtEnd = await h.transcript(rx.url);
  await h.db.transcript.update({
    where: { id: expiredAtEnd },
    data: { expiresAt: new Date(Date.now() - 1000) },
  });
  await h.finish(expiredAtEnd);

  expect(await jobResult(webhookJobId(retried, 2))).toEqual({ status: 'skipped', reason: 'gone' });
  expect(await jobResult(webhookJobId(expiredAtEnd, 1))).toEqual({ status: 'skipped', reason: 'gone' });
  const replayId = (await h.queues.webhooks.enqueueReplay(retried)).id!;
  expect(await jobResult(replayId)).toEqual({ status: 'skipped', reason: 'gone' });
  expect(rx.requests).toHaveLength(1);
  expect((await h.deliveries(retried)).map((r) => r.attempt)).toEqual([1]);
  expect(await h.deliveries(expiredAtEnd)).toEqual([]);
});

it('a deletion between reading the notice and taking its number: nothing is sent, nothing recorded', async () => {
  // The notice is read, then the caller deletes the transcript, then the attempt begins: the
  // begin (under the transcript's row lock, which a deletion takes too) must see it gone.
  class DeletedMeanwhile extends DeliveryStore {
    override async begin(input: BeginInput) {
      await h.db.transcript.update({ where: { id: input.transcriptId }, data: { deletedAt: new Date() } });
      return super.begin(input);
    }
  }
  await h.start(ONCE, { store: new DeletedMeanwhile(h.db) });
  const rx = await receiver();
  const id = await h.transcript(rx.url);
  await h.finish(id);
  expect(await jobResult(webhookJobId(id, 1))).toEqual({ status: 'skipped', reason: 'gone' });
  expect(rx.requests).toHaveLength(0);
  expect(await h.db.webhookDelivery.count({ where: { transcriptId: id } })).toBe(0);
});

it('a deletion while a send is in flight: its outcome brings back no response preview and no full URL', async () => {
  // The erasure redacts the delivery records it finds; a send that began before it must not
  // write the caller's data back when it ends, and none begins after it.
  const id = await h.transcript('https://hooks.example.com/h?token=WHTOKEN123SECRET');
  await h.finish(id, 'done', false);
  const store = new DeliveryStore(h.db);
  const begin = (slot: number) =>
    automaticBegin(id, 'https://hooks.example.com/h?token=WHTOKEN123SECRET', slot);
  const outcome: AttemptResult = {
    startedAt: new Date(),
    delivered: false,
    statusCode: 500,
    error: null,
    responsePreview: 'echo: {"metadata":{"team":"qa"}}',
    durationMs: 3,
  };
  const inFlight = await store.begin(begin(1));
  if (inFlight === 'gone') throw new Error('the transcript is not deleted yet');
  await h.db.$transaction((tx) => eraseTranscript(tx, id, null, new Date()));
  // A run that had read the transcript just before the erasure takes no number after it.
  expect(await store.begin(begin(2))).toBe('gone');
  await store.finish(inFlight.id, outcome);
  const rows = await h.db.webhookDelivery.findMany({
    where: { transcriptId: id },
    orderBy: { attempt: 'asc' },
  });
  expect(rows.map((r) => [r.attempt, r.pending, r.statusCode, r.url, r.responsePreview])).toEqual([
    [1, false, 500, 'https://hooks.example.com', null],
  ]);
});

it('the decided schedule, time-scaled: 11 automatic attempts at the scheduled gaps, then it gives up', async () => {
  const scale = 0.0002; // the whole 8 h 46 min schedule in about 6.3 s
  await h.start({ HARK_WEBHOOK_TIME_SCALE: String(scale), HARK_WEBHOOK_TIMEOUT_MS: '1000' });
  const rx = await receiver(() => ({ status: 503, body: 'busy' }));
  const id = await h.transcript(rx.url);
  await h.finish(id);
  const records = await deliveriesCount(id, 11, 30_000);
  expect(await jobResult(webhookJobId(id, 11))).toMatchObject({
    status: 'recorded',
    attempt: 11,
    delivered: false,
  });

  expect(records.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  expect(records.every((r) => !r.manual && !r.delivered && r.statusCode === 503)).toBe(true);
  expect(new Set(rx.requests.map((r) => r.headers['hark-delivery-id']))).toEqual(new Set([`whd_${id}`]));
  for (let i = 1; i < 11; i++) {
    expect(rx.requests[i]!.at - rx.requests[i - 1]!.at).toBeGreaterThanOrEqual(
      Math.round(webhookSchedule.delaysMs[i]! * scale),
    );
  }
  expect(await h.queue.getJob(webhookJobId(id, 12))).toBeUndefined();
  expect(rx.requests).toHaveLength(11);
});

it('a re-run that finds its attempt recorded sends nothing again and still queues the next one', async () => {
  await h.start(FAST);
  const rx = await receiver();
  const id = await h.transcript(rx.url);
  await h.finish(id, 'done', false);
  // As if a dispatcher sent attempt 1, recorded it, and died before queueing attempt 2.
  const store = new DeliveryStore(h.db);
  const crashed = automaticBegin(id, rx.url, 1);
  expect(await store.begin(crashed)).toMatchObject({ id: crashed.id, attempt: 1, pending: true });
  const outcome = {
    startedAt: new Date(),
    delivered: false,
    statusCode: 500,
    error: null,
    responsePreview: null,
    durationMs: 3,
  };
  expect(await store.finish(crashed.id, outcome)).toMatchObject({ attempt: 1, pending: false });
  expect(await store.finish(crashed.id, { ...outcome, delivered: true })).toBeNull(); // one outcome per record
  expect(await store.begin({ ...crashed, id: newId('whd') })).toMatchObject({ id: crashed.id }); // one record per slot
  await h.enqueueAttempt(id, 1);

  expect(await jobResult(webhookJobId(id, 1))).toEqual({
    status: 'recorded',
    deliveryId: crashed.id,
    attempt: 1,
    delivered: false,
    sent: false,
  });
  const records = await deliveriesCount(id, 2);
  expect(records.map((r) => [r.attempt, r.delivered])).toEqual([
    [1, false],
    [2, true],
  ]);
  expect(rx.requests).toHaveLength(1);
});

it('Postgres failing after the send: the attempt is re-run (a duplicate with the same id), never lost', async () => {
  class FlakyStore extends DeliveryStore {
    failures = 1;
    override async finish(id: string, result: AttemptResult) {
      if (this.failures-- > 0) throw new Error('Connection terminated unexpectedly');
      return super.finish(id, result);
    }
  }
  await h.start(FAST, { store: new FlakyStore(h.db) });
  const rx = await receiver();
  const id = await h.transcript(rx.url);
  await h.finish(id);
  const [a, b] = await rx.received(2, 10_000);
  expect(b!.headers['hark-delivery-id']).toBe(a!.headers['hark-delivery-id']);
  const records = await deliveriesCount(id, 1);
  expect(await jobResult(webhookJobId(id, 1))).toMatchObject({
    status: 'recorded',
    attempt: 1,
    delivered: true,
  });
  expect(records.map((r) => [r.attempt, r.delivered])).toEqual([[1, true]]);
});

it('a replay continues the count; once one is acknowledged, the automatic schedule stops', async () => {
  await h.start({ HARK_WEBHOOK_SCHEDULE_MS: '0,1500', HARK_WEBHOOK_TIMEOUT_MS: '1000' });
  const rx = await receiver((i) => (i === 0 ? { status: 500 } : { status: 200, body: 'ok' }));
  const id = await h.transcript(rx.url);
  await h.finish(id);
  await deliveriesCount(id, 1);
  const replayId = (await h.queues.webhooks.enqueueReplay(id)).id!;
  expect(await jobResult(replayId)).toEqual({
    status: 'recorded',
    deliveryId: replayId,
    attempt: 2,
    delivered: true,
    sent: true,
  });
  expect(await jobResult(webhookJobId(id, 2))).toEqual({ status: 'skipped', reason: 'acknowledged' });
  expect((await h.deliveries(id)).map((r) => [r.attempt, r.manual, r.delivered])).toEqual([
    [1, false, false],
    [2, true, true],
  ]);
  expect(rx.requests.map((r) => r.headers['hark-delivery-id'])).toEqual([`whd_${id}`, `whd_${id}`]);
});

it('a replay made while automatic attempt 1 is still sending takes number 2: numbers follow the sends, not their ends', async () => {
  await h.start({ HARK_WEBHOOK_SCHEDULE_MS: '0', HARK_WEBHOOK_TIMEOUT_MS: '5000' });
  const rx = await receiver((i) =>
    i === 0 ? { status: 200, body: 'slow', delayMs: 2500 } : { status: 200 },
  );
  const id = await h.transcript(rx.url);
  await h.finish(id);
  await rx.received(1); // attempt 1 is out and waits for its answer
  const replayId = (await h.queues.webhooks.enqueueReplay(id)).id!;
  expect(await jobResult(replayId)).toMatchObject({ status: 'recorded', attempt: 2, sent: true });
  expect(await jobResult(webhookJobId(id, 1))).toMatchObject({ status: 'recorded', attempt: 1, sent: true });
  const records = await h.deliveries(id);
  expect(records.map((r) => [r.attempt, r.manual, r.delivered, r.responsePreview])).toEqual([
    [1, false, true, 'slow'],
    [2, true, true, ''],
  ]);
  expect(records[0]!.createdAt.getTime()).toBeLessThan(records[1]!.createdAt.getTime());
});

it('a send that died before its record: the re-run sends again under the same number, with no gap', async () => {
  await h.start(ONCE);
  const rx = await receiver();
  const id = await h.transcript(rx.url);
  await h.finish(id, 'done', false);
  // As if a dispatcher began attempt 1 (its number taken) and died before it finished.
  const store = new DeliveryStore(h.db);
  const begun = await store.begin(automaticBegin(id, rx.url, 1));
  if (begun === 'gone') throw new Error('the transcript is not deleted');
  expect(begun).toMatchObject({ attempt: 1, pending: true });
  expect(await store.begin(automaticBegin(id, rx.url, 1))).toMatchObject({ id: begun.id }); // one per slot
  await h.enqueueAttempt(id, 1);
  expect(await jobResult(webhookJobId(id, 1))).toEqual({
    status: 'recorded',
    deliveryId: begun.id,
    attempt: 1,
    delivered: true,
    sent: true,
  });
  const replayId = (await h.queues.webhooks.enqueueReplay(id)).id!;
  expect(await jobResult(replayId)).toMatchObject({ attempt: 2, sent: true });
  expect((await h.deliveries(id)).map((r) => [r.attempt, r.manual, r.pending])).toEqual([
    [1, false, false],
    [2, true, false],
  ]);
  expect(rx.requests).toHaveLength(2);
});

it('a send that died before its record, then a replay acknowledged: the re-run sends nothing and the interrupted attempt is listed, not left pending', async () => {
  await h.start(ONCE);
  const rx = await receiver();
  const id = await h.transcript(rx.url);
  await h.finish(id, 'done', false);
  // As if a dispatcher began attempt 1 and died mid-send; the caller's replay is then acknowledged.
  const store = new DeliveryStore(h.db);
  const begun = await store.begin(automaticBegin(id, rx.url, 1, new Date(Date.now() - 60_000)));
  if (begun === 'gone') throw new Error('the transcript is not deleted');
  const replayId = (await h.queues.webhooks.enqueueReplay(id)).id!;
  expect(await jobResult(replayId)).toMatchObject({ attempt: 2, delivered: true, sent: true });
  await h.enqueueAttempt(id, 1);
  expect(await jobResult(webhookJobId(id, 1))).toEqual({
    status: 'recorded',
    deliveryId: begun.id,
    attempt: 1,
    delivered: false,
    sent: false,
  });
  const records = await h.deliveries(id);
  expect(records.map((r) => [r.attempt, r.manual, r.delivered, r.statusCode, r.error, r.durationMs])).toEqual(
    [
      [1, false, false, null, 'interrupted', null],
      [2, true, true, 200, null, expect.any(Number)],
    ],
  );
  // Its time is when its send began, before the replay's.
  expect(records[0]!.createdAt.getTime()).toBeLessThan(records[1]!.createdAt.getTime());
  expect(await h.db.webhookDelivery.count({ where: { transcriptId: id, pending: true } })).toBe(0);
  expect(rx.requests).toHaveLength(1);
});

it('a run still sending when a re-run recorded its attempt as interrupted: its real outcome replaces the guess', async () => {
  // A stalled job picked up twice: the re-run found the notice acknowledged by a replay and the
  // attempt pending, and finished it 'interrupted'; the first run, alive after all, then had its
  // answer (delivered, 200) thrown away, and the log said the attempt never got through.
  await h.start(ONCE);
  const rx = await receiver();
  const id = await h.transcript(rx.url);
  await h.finish(id, 'done', false);
  const store = new DeliveryStore(h.db);
  const startedAt = new Date(Date.now() - 60_000);
  const begun = await store.begin(automaticBegin(id, rx.url, 1, startedAt));
  if (begun === 'gone') throw new Error('the transcript is not deleted');
  expect(await store.interrupt(begun.id)).toMatchObject({ attempt: 1, pending: false });
  const outcome = {
    delivered: true,
    statusCode: 200,
    error: null,
    responsePreview: 'ok',
    durationMs: 40,
    startedAt,
  };
  expect(await store.finish(begun.id, outcome)).toMatchObject({ attempt: 1, delivered: true });
  const [record] = await h.deliveries(id);
  expect([
    record!.delivered,
    record!.statusCode,
    record!.error,
    record!.responsePreview,
    record!.durationMs,
  ]).toEqual([true, 200, null, 'ok', 40]);
  expect(record!.createdAt.getTime()).toBe(startedAt.getTime());
  // A finished outcome is never replaced: the second of two runs' outcomes, or a late interrupt.
  expect(await store.finish(begun.id, { ...outcome, delivered: false, statusCode: 500 })).toBeNull();
  expect(await store.interrupt(begun.id)).toBeNull();
  expect((await h.deliveries(id)).map((r) => [r.delivered, r.statusCode])).toEqual([[true, 200]]);
});

it('with ALLOW_PRIVATE_URLS off (production), a webhookUrl resolving to loopback is refused at connect time', async () => {
  await h.start({ ...ONCE, ALLOW_PRIVATE_URLS: 'false' });
  const rx = await receiver();
  // A host name, not an IP literal: the refusal comes from the DNS answer checked when connecting.
  const id = await h.transcript(rx.url.replace('127.0.0.1', 'localhost'));
  await h.finish(id);
  const [record] = await deliveriesCount(id, 1);
  expect(record).toMatchObject({
    attempt: 1,
    delivered: false,
    statusCode: null,
    error: 'blocked_address',
    responsePreview: null,
  });
  expect(rx.requests).toHaveLength(0);
});
