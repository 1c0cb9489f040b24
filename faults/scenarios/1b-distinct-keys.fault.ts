import { faultScenario, fmt, tally } from '@hark/testing/faults';

faultScenario('1b 40 concurrent creates, one account, 40 distinct keys', async (ctx) => {
  // Each request is independent (its own key), so each must succeed: 40 transcripts.
  const { port } = await ctx.apiAndWorker();
  const acct = await ctx.account();
  const rs = await Promise.all(
    Array.from({ length: 40 }, (_, i) => ctx.create(port, acct, {}, { 'Idempotency-Key': `k-${i}` })),
  );
  const codes = tally(
    rs,
    (r) =>
      `${r.status}${r.body.error ? `:${r.body.error.code}${r.body.error.retryable ? '(retryable)' : ''}` : ''}`,
  );
  const problems: string[] = [];
  const ok = rs.filter((r) => r.status === 201).length;
  if (ok !== rs.length) problems.push(`${rs.length - ok} of ${rs.length} creates refused: ${fmt(codes)}`);
  const rows = await ctx.db.transcript.count({ where: { accountId: acct.accountId } });
  if (rows !== ok) problems.push(`${rows} transcripts stored for ${ok} accepted creates`);
  if (!(await ctx.settle([acct.accountId]))) problems.push('did not settle');
  problems.push(...(await ctx.invariants([acct.accountId])));
  return {
    problems,
    figures: `responses: ${fmt(codes)} rows=${rows} ${fmt(await ctx.statusCounts([acct.accountId]))}`,
  };
});
