import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  OwnS3Proxy,
  type Res,
  fakeEngine,
  faultScenario,
  faultsConfig,
  fmt,
  logFor,
  req,
  sendBytes,
} from '@hark/testing/faults';
import { S3Gate, waitFor } from '@hark/testing';

faultScenario(
  '9a object store hangs (accepts, never answers) -> 503 retryable, nothing wedged, recovery',
  async (ctx) => {
    // Issue 36: against a store that accepted connections and never answered, an append hung for
    // good (its upload locked, its bytes reserved), a worker's fetch held its job slot, a sweep
    // its scheduler. Here a gate in front of this scenario's own S3Proxy swallows everything for a
    // while; the apps run with 1 s request time-outs.
    const s3 = new OwnS3Proxy();
    const problems: string[] = [];
    let gate: S3Gate | undefined;
    try {
      await s3.start();
      gate = await S3Gate.open(s3.endpoint);
      const bin = await fakeEngine({
        audio: faultsConfig.audio,
        whisperBin: faultsConfig.whisperBin,
        whisperModel: faultsConfig.whisperModel,
        delayMs: faultsConfig.fakeEngineMs,
      });
      const { env, port, worker } = await ctx.apiAndWorker({
        ...s3.appEnv(gate.endpoint),
        WHISPER_BIN: bin,
        HARK_RETENTION_SWEEP_MS: '1000',
      });
      const acct = await ctx.account();
      const audio = await readFile(faultsConfig.audio);
      const sha = createHash('sha256').update(audio).digest('hex');
      const half = audio.length >> 1;

      // Before: one upload whole, one half sent.
      const whole = await sendBytes(port, 'POST', `/v1/uploads?sha256=${sha}`, acct, audio);
      const part = await sendBytes(port, 'POST', `/v1/uploads?sha256=${sha}`, acct, audio.subarray(0, half));
      if (whole.status !== 201 || part.status !== 201)
        throw new Error(`uploads before the fault: ${whole.status}, ${part.status}`);
      const [wholeId, partId] = [whole.body.data!.id, part.body.data!.id];

      // The store hangs. A transcript of the whole upload: its job's fetch waits on the store.
      gate.mode = 'hang';
      const hungAt = Date.now();
      const t1 = await ctx.create(port, acct, { url: undefined, uploadId: wholeId });
      if (t1.status !== 201) problems.push(`create during the hang: ${t1.status}`);
      const t1Id = t1.body.data?.id ?? '';
      const timed = async (run: () => Promise<Res>) => {
        const t0 = Date.now();
        const r = await run();
        return { r, ms: Date.now() - t0 };
      };
      const [put, post] = await Promise.all([
        timed(() => sendBytes(port, 'PUT', `/v1/uploads/${partId}`, acct, audio.subarray(half))),
        timed(() => sendBytes(port, 'POST', '/v1/uploads', acct, audio.subarray(0, 1000))),
      ]);
      for (const [what, { r, ms }] of [
        ['PUT', put],
        ['POST', post],
      ] as const) {
        if (r.status !== 503 || r.body.error?.code !== 'unavailable' || r.body.error.retryable !== true)
          problems.push(`${what} while the store hangs: ${r.status}/${r.body.error?.code ?? r.err}`);
        if (ms > 15_000) problems.push(`${what} while the store hangs took ${ms} ms`);
      }
      // The upload is free again at once (it used to answer 409 upload_busy until a restart),
      // and nothing stays reserved against the account's quota.
      const status = await req(port, 'GET', `/v1/uploads/${partId}`, acct);
      if (status.status !== 200 || status.body.data?.receivedBytes !== half)
        problems.push(
          `GET of the upload after the failed chunk: ${status.status} ${status.body.data?.receivedBytes}`,
        );
      const reserved = await ctx.redis.cli(
        'HLEN',
        `${env.HARK_REDIS_PREFIX}:upload-inflight:${acct.accountId}`,
      );
      if (reserved !== '0') problems.push(`${reserved} upload reservations left after the failures`);
      // The job's first attempt fails within the time-outs (its slot is not held) and is retried.
      await logFor(worker, 'attempt failed; BullMQ will retry', t1Id, 30_000).catch(() =>
        problems.push('the job waiting on the hung store did not fail its attempt within 30 s'),
      );
      const hungMs = Date.now() - hungAt;

      // The store answers again: the same processes carry on, nothing restarted.
      gate.mode = 'pass';
      const recoveredAt = Date.now();
      const resumed = await sendBytes(port, 'PUT', `/v1/uploads/${partId}`, acct, audio.subarray(half));
      if (resumed.status !== 200 || resumed.body.data?.receivedBytes !== audio.length)
        problems.push(
          `resumed chunk: ${resumed.status}/${resumed.body.error?.code ?? resumed.body.data?.receivedBytes}`,
        );
      const t2 = await ctx.create(port, acct, { url: undefined, uploadId: partId });
      if (t2.status !== 201) problems.push(`create after the hang: ${t2.status}`);
      if (!(await ctx.settle([acct.accountId], 60_000))) problems.push('did not settle within 60 s');
      const counts = await ctx.statusCounts([acct.accountId]);
      if ((counts.done ?? 0) !== 2) problems.push(`done ${counts.done ?? 0} of 2 (${fmt(counts)})`);
      // The sweeps kept running through the hang: retention erases the first transcript, and its
      // upload's bytes, once it is due.
      await ctx.db.transcript.update({ where: { id: t1Id }, data: { expiresAt: new Date() } });
      const erased = await waitFor(
        async () => (await ctx.db.transcript.findUnique({ where: { id: t1Id } }))?.deletedAt != null,
        { timeout: 20_000, interval: 200 },
      ).catch(() => false);
      if (!erased) problems.push('the retention sweep did not erase a due transcript after the hang');
      problems.push(...(await ctx.invariants([acct.accountId])));
      // Sweep rounds that failed on the hung store instead of holding their scheduler.
      const sweepFailures = worker.logs.filter((l) => l.msg === 'sweep failed').length;
      const attempts = worker.logs.filter(
        (l) => l.transcriptId === t1Id && l.msg === 'attempt failed; BullMQ will retry',
      ).length;
      return {
        problems,
        figures: fmt({
          put503ms: put.ms,
          post503ms: post.ms,
          hungMs,
          t1FailedAttempts: attempts,
          sweepFailures,
          recoveredInMs: Date.now() - recoveredAt,
        }),
      };
    } finally {
      await gate?.close();
      await s3.dispose();
    }
  },
);
