import { faultScenario, sleep, startNoticeReceiver, workerKillingEngine } from '@hark/testing/faults';

faultScenario('3 job that kills every worker -> failed engine_failed', async (ctx) => {
  const bin = await workerKillingEngine();
  const env = await ctx.baseEnv();
  const crashEnv = { ...env, WHISPER_BIN: bin };
  const rec = await startNoticeReceiver();
  const { port } = await ctx.fleet.api(env);
  await ctx.fleet.dispatcher(env);
  const acct = await ctx.account();
  const problems: string[] = [];
  const r = await ctx.create(port, acct, { webhookUrl: rec.url });
  if (r.status !== 201) problems.push(`create ${r.status} ${JSON.stringify(r.body)}`);
  const id = r.body.data?.id ?? '';
  let deaths = 0;
  const t0 = Date.now();
  while (Date.now() - t0 < 50_000) {
    const w = ctx.fleet.app('worker', crashEnv);
    ctx.fleet.expectExit(w); // crashes by design
    await w.waitForLog('worker ready', 20_000).catch(() => undefined);
    const res = await Promise.race([w.exited.then(() => 'died'), sleep(8000).then(() => 'alive')]);
    if (res === 'died') deaths++;
    else await ctx.fleet.stop(w);
    const t = await ctx.db.transcript.findUnique({ where: { id } });
    if (t?.status !== 'processing') break;
  }
  if (!(await ctx.settle([acct.accountId], 10_000))) problems.push('did not settle');
  const t = await ctx.db.transcript.findUnique({ where: { id } });
  if (t?.status !== 'failed' || t.errorCode !== 'engine_failed')
    problems.push(`ended ${t?.status}/${t?.errorCode}`);
  if (t && t.reserved.toString() !== '0') problems.push(`hold ${t.reserved.toString()} not released`);
  problems.push(...(await ctx.invariants([acct.accountId], { receiverUp: true })));
  await sleep(1500); // a duplicate notice would show up here
  const sent = rec.requests.filter((q) => q.transcriptId === id || q.transcriptId === '').length;
  const rows = await ctx.db.webhookDelivery.count({ where: { transcriptId: id } });
  if (sent !== 1) problems.push(`receiver got ${sent} notices`);
  await rec.close();
  return {
    problems,
    figures: `worker-deaths=${deaths} status=${t?.status}/${t?.errorCode} reserved=${t?.reserved.toString()} notices=${sent} delivery-rows=${rows}`,
  };
});
