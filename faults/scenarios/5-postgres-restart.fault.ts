import {
  type Res,
  answerKey,
  faultPostgres,
  faultScenario,
  faultsConfig,
  fmt,
  req,
  sleep,
  startNoticeReceiver,
  tally,
} from '@hark/testing/faults';

faultScenario(
  '5 Postgres restarted during load -> retryable errors, nothing corrupted, recovery',
  async (ctx) => {
    // run.sh starts this suite's own cluster and says how to control it: stopped hard here (no
    // shutdown checkpoint, like a crash) and started again.
    const pg = faultPostgres();
    if (!pg.available)
      return {
        problems: [
          'no private Postgres to restart (run through faults/run.sh without HARK_EXTERNAL_DATABASE_URL)',
        ],
        figures: '',
      };
    const rec = await startNoticeReceiver();
    const { port, acct, problems, rs } = await ctx.jobsRunning(6, { webhookUrl: rec.url }, true);
    const first = rs[0]?.body.data?.id ?? '';
    // Postgres goes away hard while jobs run; requests keep coming for 3 s.
    await ctx.db.$disconnect();
    await pg.crash();
    const t0 = Date.now();
    const during: Res[] = [];
    let slowestMs = 0;
    while (Date.now() - t0 < 3000) {
      const b0 = Date.now();
      const batch = await Promise.all([
        ctx.create(port, acct, { webhookUrl: rec.url }),
        req(port, 'GET', `/v1/transcripts/${first}`, acct),
        req(port, 'GET', '/v1/balance', acct),
      ]);
      during.push(...batch);
      slowestMs = Math.max(slowestMs, Date.now() - b0);
      await sleep(250);
    }
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status);
    await pg.start();
    const restarted = Date.now();
    // Recovery: the API accepts a create again (its pool reconnects by itself).
    let recoveredMs = -1;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const r = await ctx.create(port, acct, { webhookUrl: rec.url });
      if (r.status === 201) {
        recoveredMs = Date.now() - restarted;
        break;
      }
      await sleep(250);
    }
    if (recoveredMs < 0) problems.push('API did not accept a create within 30 s of the restart');
    // Every answer during the outage: success, or 5xx with the envelope and retryable true.
    const bad = during.filter(
      (r) => !(r.status === 200 || r.status === 201 || (r.status >= 500 && r.body.error?.retryable === true)),
    );
    if (bad.length)
      problems.push(
        `answers while Postgres was down: ${bad.map((r) => `${r.status}/${r.body.error?.code ?? r.err}`).join(',')}`,
      );
    if (ready !== 503) problems.push(`/readyz answered ${ready} while Postgres was down`);
    if (slowestMs > 12_000) problems.push(`a request took ${slowestMs} ms while Postgres was down`);
    if (!(await ctx.settle([acct.accountId])))
      problems.push(`did not settle within ${faultsConfig.settleMs / 1000} s`);
    const counts = await ctx.statusCounts([acct.accountId]);
    const rows = await ctx.db.transcript.count({ where: { accountId: acct.accountId } });
    const accepted = rs.length + during.filter((r) => r.status === 201).length + 1;
    if (rows !== accepted) problems.push(`${rows} transcripts for ${accepted} accepted creates`);
    if ((counts.done ?? 0) !== rows) problems.push(`done ${counts.done ?? 0} of ${rows}`);
    problems.push(...(await ctx.invariants([acct.accountId], { receiverUp: true })));
    await rec.close();
    return {
      problems,
      figures: `during-outage: ${fmt(tally(during, answerKey))} slowest=${slowestMs}ms readyz=${ready} api-recovered-in=${(recoveredMs / 1000).toFixed(1)}s ${fmt(counts)}`,
    };
  },
);
