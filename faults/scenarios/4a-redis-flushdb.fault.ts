import { faultScenario, faultsConfig, fmt } from '@hark/testing/faults';

faultScenario('4a Redis FLUSHDB during load -> reconciler recovers', async (ctx) => {
  const { port, acct, problems, rs } = await ctx.jobsRunning(8);
  const t0 = Date.now();
  await ctx.redis.cli('flushdb');
  const more = await Promise.all(Array.from({ length: 4 }, () => ctx.create(port, acct)));
  const settled = await ctx.settle([acct.accountId]);
  if (!settled) problems.push(`did not settle within ${faultsConfig.settleMs / 1000} s`);
  const counts = await ctx.statusCounts([acct.accountId]);
  const n = rs.length + more.filter((r) => r.status === 201).length;
  if ((counts.done ?? 0) !== n) problems.push(`done ${counts.done ?? 0} of ${n}`);
  problems.push(...(await ctx.invariants([acct.accountId])));
  return { problems, figures: `${fmt(counts)} recovered-in=${((Date.now() - t0) / 1000).toFixed(1)}s` };
});
