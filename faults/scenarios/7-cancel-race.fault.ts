import {
  type Res,
  answerKey,
  fakeEngine,
  faultScenario,
  faultsConfig,
  fmt,
  logFor,
  rand,
  req,
  sleep,
  tally,
} from '@hark/testing/faults';

const CANCEL_RACES = faultsConfig.cancelRaces;

faultScenario(`7 cancel racing completion x${CANCEL_RACES}`, async (ctx) => {
  // 100 real engine runs would take minutes on 2 shared cores, and the race is between the
  // cancel and the completion transaction, not inside whisper. So the engine here is a script
  // that waits FAULTS_FAKE_ENGINE_MS and writes the real whisper-cli output for jfk.wav,
  // captured once below; download, ffprobe, ffmpeg and the rest of the worker are real.
  const bin = await fakeEngine({
    audio: faultsConfig.audio,
    whisperBin: faultsConfig.whisperBin,
    whisperModel: faultsConfig.whisperModel,
    delayMs: faultsConfig.fakeEngineMs,
  });
  const { port, worker: w } = await ctx.apiAndWorker({ HARK_WORKER_CONCURRENCY: '2', WHISPER_BIN: bin });
  const acct = await ctx.account();
  const problems: string[] = [];
  // Engine time for one job, measured first, so cancels land around completion.
  const probe = await ctx.create(port, acct);
  const pid = probe.body.data!.id;
  const s0 = await logFor(w, 'transcription started', pid);
  const d0 = await logFor(w, 'transcript done', pid);
  const ms = (l: Record<string, unknown>) => new Date(l.time as string | number).getTime();
  const jobMs = Math.max(200, ms(d0) - ms(s0)) || 1500;
  const cancels: Res[] = [];
  const ids: string[] = [];
  const batch = 4;
  for (let i = 0; i < CANCEL_RACES; i += batch) {
    await Promise.all(
      Array.from({ length: Math.min(batch, CANCEL_RACES - i) }, async () => {
        const r = await ctx.create(port, acct);
        if (r.status !== 201) return void problems.push(`create ${r.status}`);
        const id = r.body.data!.id;
        ids.push(id);
        await logFor(w, 'transcription started', id, 60_000).catch(() => undefined);
        await sleep(rand(0.6, 1.3) * jobMs);
        cancels.push(await req(port, 'POST', `/v1/transcripts/${id}/cancel`, acct));
      }),
    );
  }
  if (!(await ctx.settle([acct.accountId]))) problems.push('did not settle');
  const rows = await ctx.db.transcript.findMany({
    where: { id: { in: ids } },
    select: { id: true, status: true, cost: true },
  });
  const charges = await ctx.db.ledgerEntry.groupBy({
    by: ['transcriptId'],
    where: { transcriptId: { in: ids }, kind: 'charge' },
    _count: true,
  });
  const chargeOf = new Map(charges.map((c) => [c.transcriptId, c._count]));
  for (const t of rows) {
    const n = chargeOf.get(t.id) ?? 0;
    if (t.status === 'canceled' && n !== 0) problems.push(`${t.id} canceled but charged`);
    else if (t.status === 'done' && n !== 1) problems.push(`${t.id} done with ${n} charges`);
    else if (t.status !== 'canceled' && t.status !== 'done') problems.push(`${t.id} ended ${t.status}`);
  }
  const counts = await ctx.statusCounts([acct.accountId]);
  problems.push(...(await ctx.invariants([acct.accountId])));
  return {
    problems,
    figures: `job=${jobMs}ms ${fmt(counts)} (incl. 1 probe) cancel-responses: ${fmt(tally(cancels, answerKey))}`,
  };
});
