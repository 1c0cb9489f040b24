import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '@hark/testing';
import {
  diskFullEngine,
  fakeEngine,
  faultScenario,
  faultsConfig,
  fmt,
  mountSmallDisk,
  tally,
} from '@hark/testing/faults';

const JOBS = 4;

faultScenario('10 the disk under the worker scratch folder fills up', async (ctx) => {
  // The engine is the stand-in of scenario 7 (the real whisper-cli output for jfk.wav after
  // FAULTS_FAKE_ENGINE_MS): the disk is met by the worker's own writes, not by whisper.
  const fake = await fakeEngine({
    audio: faultsConfig.audio,
    whisperBin: faultsConfig.whisperBin,
    whisperModel: faultsConfig.whisperModel,
    delayMs: faultsConfig.fakeEngineMs,
  });
  // One job at a time, so the disk is met at each write in turn.
  const env = await ctx.baseEnv({
    WHISPER_BIN: fake,
    WHISPER_QUANTIZE: 'off',
    HARK_METRICS_PORT: '0',
    HARK_WORKER_CONCURRENCY: '1',
  });
  // The quantised model is kept off the small disk.
  env.HARK_MODEL_CACHE_DIR = path.join(path.dirname(env.HARK_TMP_DIR!), 'models');
  // A 4 MiB tmpfs with 500 kB of room left: the download of jfk.wav (352 kB) fits, its WAV does
  // not (nor a download beside another job's files). Where mounting is not allowed, the engine's
  // writes fail instead.
  const disk = mountSmallDisk(env.HARK_TMP_DIR!, 4 * 2 ** 20);
  const marker = path.join(path.dirname(env.HARK_TMP_DIR!), 'disk-full');
  try {
    if (disk) disk.fill(500_000);
    else {
      writeFileSync(marker, '');
      env.WHISPER_BIN = await diskFullEngine(fake, marker);
    }
    const { port } = await ctx.fleet.api(env);
    const w = await ctx.fleet.worker(env);
    const acct = await ctx.account();
    const problems: string[] = [];
    const rs = await Promise.all(Array.from({ length: JOBS }, () => ctx.create(port, acct)));
    if (rs.some((r) => r.status !== 201)) problems.push(`creates ${rs.map((r) => r.status).join(',')}`);
    // The first attempts fail on the full disk; then room is made, as an operator or another
    // job ending would, before their last retries (5 s, then 10 s later).
    const failures = () => w.logs.filter((l) => l.msg === 'attempt failed; BullMQ will retry').length;
    await waitFor(() => failures() >= 2, { timeout: 30_000, interval: 20 }).catch(() => undefined);
    if (disk) disk.free();
    else rmSync(marker);
    if (!(await ctx.settle([acct.accountId], 90_000))) problems.push('did not settle within 90 s');

    const counts = await ctx.statusCounts([acct.accountId]);
    if ((counts.done ?? 0) !== JOBS) problems.push(`done ${counts.done ?? 0} of ${JOBS}: ${fmt(counts)}`);
    const charges = await ctx.db.ledgerEntry.count({ where: { accountId: acct.accountId, kind: 'charge' } });
    if (charges !== JOBS) problems.push(`${charges} charges for ${JOBS} transcripts`);
    // The full disk is this machine's trouble: retried as the worker's, never the caller's audio.
    const retried = w.logs.filter((l) => l.msg === 'attempt failed; BullMQ will retry');
    const codes = tally(retried, (l) => String(l.code));
    const writes = tally(retried, (l) =>
      /ffmpeg/.test(String(l.err)) ? 'wav' : /ENOSPC/.test(String(l.err)) ? 'download' : 'engine',
    );
    if (Object.keys(codes).some((c) => c !== 'engine_failed')) problems.push(`retried as ${fmt(codes)}`);
    if (w.child.exitCode !== null || w.child.signalCode !== null) problems.push('the worker exited');
    const left = readdirSync(env.HARK_TMP_DIR!).filter((n) => n !== 'ballast');
    if (left.length) problems.push(`left in the scratch folder: ${left.join(', ')}`);
    problems.push(...(await ctx.invariants([acct.accountId])));
    return {
      problems,
      figures: `disk=${disk ? 'tmpfs 4 MiB' : 'engine to /dev/full'} ${fmt(counts)} charges=${charges} retried=${retried.length} (${fmt(codes)}; ${fmt(writes)})`,
    };
  } finally {
    disk?.unmount();
  }
});
