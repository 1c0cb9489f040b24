import { readdirSync } from 'node:fs';
import { type AppProcess, testAudio, waitFor } from '@hark/testing';
import { faultScenario, fmt, killOrphans, logFor, rand, serveFile, sleep } from '@hark/testing/faults';

const ROUNDS = 3;

faultScenario(`11 worker killed mid-diarization (as by the OOM killer) x${ROUNDS}`, async (ctx) => {
  // A 30 s meeting excerpt with speakers: after the decode, whisper-cli and the neural diarizer
  // run side by side for seconds. The worker running the job is SIGKILLed then (what the OOM
  // killer sends); the other worker, live all along and sharing the scratch folder, takes the
  // job over once its lock expires. Nothing is restarted for the job to finish.
  const audio = await serveFile(testAudio.meetingTrn05Wav, 'trn05.wav');
  const env = await ctx.baseEnv({
    // Not 1 s as in scenario 2: on a loaded machine a live worker's renewal slipped past a
    // second while it diarized, and its job was taken over as well.
    HARK_JOB_LOCK_MS: '6000',
    HARK_STALLED_INTERVAL_MS: '1000',
    HARK_WORKER_CONCURRENCY: '1',
    HARK_METRICS_PORT: '0',
  });
  const { port } = await ctx.fleet.api(env);
  const acct = await ctx.account();
  const problems: string[] = [];
  const workers: AppProcess[] = [await ctx.fleet.worker(env), await ctx.fleet.worker(env)];
  let killedMidJob = 0;
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const r = await ctx.create(port, acct, { url: audio.url, speakers: true });
      if (r.status !== 201) {
        problems.push(`create ${r.status}`);
        continue;
      }
      const id = r.body.data!.id;
      const holder = await waitFor(
        () =>
          workers.find((w) => w.logs.some((l) => l.msg === 'transcription started' && l.transcriptId === id)),
        { timeout: 30_000, interval: 20, message: `a worker started ${id}` },
      );
      // Decoded: the engine and the diarizer are running.
      await waitFor(
        () => holder.logs.some((l) => l.transcriptId === id && l.msg === 'step done' && l.step === 'decode'),
        { timeout: 30_000, interval: 20, message: `${id} decoded` },
      );
      await sleep(rand(200, 1500));
      if (!holder.logs.some((l) => l.transcriptId === id && l.msg === 'transcript done')) killedMidJob++;
      ctx.fleet.expectExit(holder);
      holder.kill('SIGKILL');
      await holder.exited;
      killOrphans(id); // its engine went with it
      const other = workers.find((w) => w !== holder)!;
      const done = await logFor(other, 'transcript done', id, 120_000).catch(() => null);
      if (!done) problems.push(`${id} not done by the live worker within 120 s`);
      // What the killed run left (the audio, the WAV) went with the re-run, and the re-run's own
      // folder goes once it has announced the transcript.
      const entries = () => readdirSync(env.HARK_TMP_DIR!).filter((n) => n.includes(id));
      const gone = await waitFor(() => entries().length === 0, { timeout: 10_000 }).catch(() => false);
      if (!gone) problems.push(`${id}: left in the scratch folder: ${entries().join(', ')}`);
      // Its replacement, as a supervisor would start one: not needed for the job above.
      workers[workers.indexOf(holder)] = await ctx.fleet.worker(env);
    }
    if (!(await ctx.settle([acct.accountId], 60_000))) problems.push('did not settle');
    const counts = await ctx.statusCounts([acct.accountId]);
    if ((counts.done ?? 0) !== ROUNDS) problems.push(`done ${counts.done ?? 0} of ${ROUNDS}: ${fmt(counts)}`);
    const charges = await ctx.db.ledgerEntry.count({ where: { accountId: acct.accountId, kind: 'charge' } });
    if (charges !== ROUNDS) problems.push(`${charges} charges for ${ROUNDS} transcripts`);
    problems.push(...(await ctx.invariants([acct.accountId])));
    return { problems, figures: `killed-mid-job=${killedMidJob} ${fmt(counts)} charges=${charges}` };
  } finally {
    await audio.close();
  }
});
