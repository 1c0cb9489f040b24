import { type Res, answerKey, faultScenario, fmt, sleep, tally } from '@hark/testing/faults';

faultScenario('6 funds for exactly 10 jobs, rounds of 40 concurrent creates', async (ctx) => {
  // 11 s at 36 cents/h = 0.11 cents a job; the account holds 10 x 0.11 = 1.1 cents (topped up).
  // The provisional hold is 60 s (0.6 cents) or all that is available, so only ~2 creates get in
  // at once; the rest are refused 402 until holds shrink to the real cost. Rounds repeat until
  // a round admits nothing: by then exactly 10 must be done and the balance exactly 0.
  const { port } = await ctx.apiAndWorker();
  const acct = await ctx.account('1.1');
  const problems: string[] = [];
  let minAvail = Infinity;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const a = await ctx.db.account.findUniqueOrThrow({ where: { id: acct.accountId } });
      minAvail = Math.min(
        minAvail,
        Number(a.total) - Number(a.reserved),
        Number(a.total),
        Number(a.reserved),
      );
      await sleep(25);
    }
  })();
  const responses: Res[] = [];
  let rounds = 0;
  for (; rounds < 30; rounds++) {
    const rs = await Promise.all(Array.from({ length: 40 }, () => ctx.create(port, acct)));
    responses.push(...rs);
    const bad = rs.filter(
      (r) => r.status !== 201 && !(r.status === 402 && r.body.error?.code === 'insufficient_balance'),
    );
    if (bad.length)
      problems.push(`unexpected: ${bad.map((r) => `${r.status}/${r.body.error?.code}`).join(',')}`);
    await ctx.settle([acct.accountId], 30_000);
    if (rs.every((r) => r.status !== 201)) break;
  }
  sampling = false;
  await sampler;
  const counts = await ctx.statusCounts([acct.accountId]);
  const failed = await ctx.db.transcript.findMany({
    where: { accountId: acct.accountId, status: 'failed' },
    select: { errorCode: true },
  });
  const badFail = failed.filter((f) => f.errorCode !== 'insufficient_balance');
  if (badFail.length) problems.push(`failed with ${badFail.map((f) => f.errorCode).join(',')}`);
  const a = await ctx.db.account.findUniqueOrThrow({ where: { id: acct.accountId } });
  if ((counts.done ?? 0) !== 10) problems.push(`done ${counts.done ?? 0}, want 10`);
  if (a.total.toString() !== '0') problems.push(`total left ${a.total.toString()}`);
  if (minAvail < 0) problems.push(`balance went negative (${minAvail})`);
  problems.push(...(await ctx.invariants([acct.accountId])));
  return {
    problems,
    figures: `rounds=${rounds + 1} ${fmt(counts)} responses: ${fmt(tally(responses, answerKey))} total-left=${a.total.toString()} min-seen=${minAvail}`,
  };
});
