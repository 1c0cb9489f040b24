import { faultScenario, faultsConfig, fmt, sleep } from '@hark/testing/faults';

faultScenario('4b Redis restarted during load -> everything done', async (ctx) => {
  const { port, acct, problems } = await ctx.jobsRunning(8);
  const t0 = Date.now();
  await ctx.redis.stop();
  const during = await Promise.all(Array.from({ length: 4 }, () => ctx.create(port, acct)));
  await sleep(1000);
  await ctx.redis.start();
  const settled = await ctx.settle([acct.accountId]);
  if (!settled) problems.push(`did not settle within ${faultsConfig.settleMs / 1000} s`);
  const badDuring = during.filter((r) => r.status !== 201 && !(r.status >= 500 && r.body.error?.retryable));
  if (badDuring.length)
    problems.push(
      `creates while Redis down: ${badDuring.map((r) => `${r.status}/${r.body.error?.code}`).join(',')}`,
    );
  const counts = await ctx.statusCounts([acct.accountId]);
  const rows = await ctx.db.transcript.count({ where: { accountId: acct.accountId } });
  if ((counts.done ?? 0) !== rows) problems.push(`done ${counts.done ?? 0} of ${rows}`);
  problems.push(...(await ctx.invariants([acct.accountId])));
  return {
    problems,
    figures: `${fmt(counts)} during-outage=${during.map((r) => r.status).join('/')} recovered-in=${((Date.now() - t0) / 1000).toFixed(1)}s`,
  };
});
