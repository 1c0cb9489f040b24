import { anyLog, faultScenario, fmt, postFresh, sleep, startNoticeReceiver } from '@hark/testing/faults';
import { waitFor } from '@hark/testing';

faultScenario('8 SIGTERM each app under load', async (ctx) => {
  const { fleet } = ctx;
  const env = await ctx.baseEnv();
  const rec = await startNoticeReceiver();
  rec.delayMs = 400;
  let a = await fleet.api(env);
  let w = await fleet.worker(env);
  let d = await fleet.dispatcher(env);
  const acct = await ctx.account();
  const problems: string[] = [];
  const exits: Record<string, number | string> = {};
  // API: 40 creates spread over ~1 s, each with its own Idempotency-Key; SIGTERM at ~0.4 s.
  const keys = Array.from({ length: 40 }, (_, i) => `sigterm-${i}`);
  const port0 = a.port;
  const sends = keys.map(async (k, i) => {
    await sleep(i * 25);
    return postFresh(port0, '/v1/transcripts', acct, { url: ctx.audioUrl, webhookUrl: rec.url }, k);
  });
  await sleep(400);
  const apiExit = fleet.stop(a.p);
  const first = await Promise.all(sends);
  exits.api = await apiExit;
  const accepted = first.filter((r) => r.status === 201).length;
  const broken = first.filter((r) => r.status === 0 && r.err !== 'ECONNREFUSED');
  const other = first.filter((r) => r.status !== 0 && r.status !== 201);
  if (other.length) problems.push(`API answered ${other.map((r) => r.status).join(',')} while stopping`);
  if (broken.length)
    problems.push(`${broken.length} requests cut mid-flight (${broken.map((r) => r.err).join(',')})`);
  a = await fleet.api(env);
  // Nothing lost: exactly the answered creates exist (no row without an answer, no answer without a row).
  const rows = await ctx.db.transcript.count({ where: { accountId: acct.accountId } });
  if (rows !== accepted) problems.push(`${rows} transcripts for ${accepted} accepted creates`);
  // Worker: SIGTERM while jobs run.
  await anyLog(w, 'transcription started', 'a job started').catch(() => undefined);
  exits.worker = await fleet.stop(w);
  w = await fleet.worker(env);
  // Dispatcher: SIGTERM while (slow) sends are in flight.
  await waitFor(() => rec.requests.length > 0, { timeout: 30_000, message: 'a notice' }).catch(
    () => undefined,
  );
  exits.dispatcher = await fleet.stop(d);
  d = await fleet.dispatcher(env);
  if (!(await ctx.settle([acct.accountId]))) problems.push('did not settle');
  for (const [k, v] of Object.entries(exits)) if (v !== 0) problems.push(`${k} exited ${v}`);
  const counts = await ctx.statusCounts([acct.accountId]);
  if ((counts.done ?? 0) !== rows) problems.push(`done ${counts.done ?? 0} of ${rows}`);
  problems.push(...(await ctx.invariants([acct.accountId], { receiverUp: true })));
  const notified = new Set(rec.requests.map((q) => q.transcriptId)).size;
  // Last: SIGTERM the idle apps too (all must exit 0).
  for (const [k, p] of [
    ['api-2', a.p],
    ['worker-2', w],
    ['dispatcher-2', d],
  ] as const) {
    const c = await fleet.stop(p);
    if (c !== 0) problems.push(`${k} exited ${c}`);
  }
  await rec.close();
  return {
    problems,
    figures: `exits ${fmt(exits)} accepted-before-stop=${accepted} refused=${first.length - accepted - broken.length - other.length} ${fmt(counts)} notified=${notified} receiver-requests=${rec.requests.length}`,
  };
});
