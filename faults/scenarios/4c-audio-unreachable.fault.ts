import { faultScenario, freePort } from '@hark/testing/faults';

faultScenario('4c audio URL unreachable (retryable failure) -> failed, worker alive', async (ctx) => {
  // Not in the brief's list; added because 4a/4b showed workers exiting right after
  // "attempt failed; BullMQ will retry" on a dead audio URL. Three attempts, 5 s + 10 s backoff.
  const { port, worker: w } = await ctx.apiAndWorker();
  const acct = await ctx.account();
  const problems: string[] = [];
  const r = await ctx.create(port, acct, { url: `http://127.0.0.1:${await freePort()}/gone.wav` });
  if (r.status !== 201) problems.push(`create ${r.status}`);
  const id = r.body.data?.id ?? '';
  if (!(await ctx.settle([acct.accountId], 60_000))) problems.push('did not settle within 60 s');
  const t = await ctx.db.transcript.findUnique({ where: { id } });
  if (t?.status !== 'failed' || t.errorCode !== 'audio_unreachable')
    problems.push(`ended ${t?.status}/${t?.errorCode}`);
  const alive = w.child.exitCode === null && w.child.signalCode === null;
  problems.push(...(await ctx.invariants([acct.accountId])));
  const retries = w.logs.filter((l) => l.msg === 'attempt failed; BullMQ will retry').length;
  return {
    problems,
    figures: `status=${t?.status}/${t?.errorCode} retries-logged=${retries} worker-alive=${alive}`,
  };
});
