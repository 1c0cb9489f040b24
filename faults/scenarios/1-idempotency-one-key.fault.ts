import { faultScenario, fmt } from '@hark/testing/faults';

faultScenario('1 idempotency: 50 concurrent creates, one key', async (ctx) => {
  const { port } = await ctx.apiAndWorker();
  const acct = await ctx.account();
  const rs = await Promise.all(
    Array.from({ length: 50 }, () => ctx.create(port, acct, {}, { 'Idempotency-Key': 'faults-one-key' })),
  );
  const ids = new Set(rs.filter((r) => r.body.data).map((r) => r.body.data!.id));
  const statuses = [...new Set(rs.map((r) => r.status))];
  const problems: string[] = [];
  const rows = await ctx.db.transcript.count({ where: { accountId: acct.accountId } });
  const reserves = await ctx.db.ledgerEntry.count({ where: { accountId: acct.accountId, kind: 'reserve' } });
  if (ids.size !== 1) problems.push(`${ids.size} distinct ids returned`);
  if (rows !== 1) problems.push(`${rows} transcripts stored`);
  if (reserves !== 1) problems.push(`${reserves} reservations`);
  if (rs.some((r) => r.status !== 201 && r.status !== 200)) problems.push(`statuses ${statuses.join(',')}`);
  if (!(await ctx.settle([acct.accountId]))) problems.push('did not settle');
  problems.push(...(await ctx.invariants([acct.accountId])));
  return {
    problems,
    figures: `statuses=${statuses.join('/')} ids=${ids.size} rows=${rows} reserves=${reserves} ${fmt(await ctx.statusCounts([acct.accountId]))}`,
  };
});
