import { faultScenario, faultsConfig, fmt, killOrphans, logFor, rand, sleep } from '@hark/testing/faults';
import { waitFor } from '@hark/testing';

const KILL_ROUNDS = faultsConfig.killRounds;

faultScenario(`2 SIGKILL worker mid-transcription x${KILL_ROUNDS}`, async (ctx) => {
  // A dead worker's job is found again after about the lock time plus one stalled check.
  const env = await ctx.baseEnv({ HARK_JOB_LOCK_MS: '1000', HARK_STALLED_INTERVAL_MS: '500' });
  const { port } = await ctx.fleet.api(env);
  const acct = await ctx.account();
  const problems: string[] = [];
  let w = await ctx.fleet.worker(env);
  let killedMidJob = 0;
  for (let i = 0; i < KILL_ROUNDS; i++) {
    const r = await ctx.create(port, acct);
    if (r.status !== 201) {
      problems.push(`create ${r.status}`);
      continue;
    }
    const id = r.body.data!.id;
    await logFor(w, 'transcription started', id).catch(() => undefined);
    await sleep(rand(0, 1200));
    if (!w.logs.some((l) => l.transcriptId === id && l.msg === 'transcript done')) killedMidJob++;
    ctx.fleet.expectExit(w);
    w.kill('SIGKILL');
    await w.exited;
    killOrphans(id); // the machine went down with it: its engine too
    w = await ctx.fleet.worker(env);
    const ok = await waitFor(
      async () => (await ctx.db.transcript.findUnique({ where: { id } }))?.status !== 'processing',
      {
        timeout: 30_000,
        interval: 100,
      },
    ).catch(() => false);
    if (!ok) problems.push(`${id} still processing 30 s after the kill`);
  }
  if (!(await ctx.settle([acct.accountId]))) problems.push('did not settle');
  const counts = await ctx.statusCounts([acct.accountId]);
  if ((counts.done ?? 0) !== KILL_ROUNDS) problems.push(`done ${counts.done ?? 0} of ${KILL_ROUNDS}`);
  const charges = await ctx.db.ledgerEntry.count({ where: { accountId: acct.accountId, kind: 'charge' } });
  if (charges !== KILL_ROUNDS) problems.push(`${charges} charges for ${KILL_ROUNDS} transcripts`);
  problems.push(...(await ctx.invariants([acct.accountId])));
  return { problems, figures: `killed-mid-job=${killedMidJob} ${fmt(counts)} charges=${charges}` };
});
