import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '@hark/testing';
import {
  OwnS3Proxy,
  anyLog,
  fakeEngine,
  faultScenario,
  faultsConfig,
  fmt,
  req,
  sendBytes,
  sleep,
} from '@hark/testing/faults';

const MiB = 1 << 20;

/** jfk.wav as 96 kHz stereo float: about 8 MiB, so its upload spans an S3 part and a remainder. */
async function bigAudio(): Promise<Buffer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'hark-faults-audio-'));
  try {
    const out = path.join(dir, 'jfk-96k.wav');
    await promisify(execFile)('ffmpeg', [
      '-nostdin',
      '-v',
      'error',
      '-i',
      faultsConfig.audio,
      '-ar',
      '96000',
      '-ac',
      '2',
      '-c:a',
      'pcm_f32le',
      out,
    ]);
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

faultScenario(
  '9b object store killed and restarted mid-upload and mid-job -> nothing lost, charged once',
  async (ctx) => {
    // This scenario's own S3Proxy, killed (SIGKILL) while a chunk streams into the API and while
    // transcripts' jobs fetch their upload, then started again on the same folder. The apps
    // (1 s request time-outs) must answer retryably meanwhile and carry on by themselves after.
    const s3 = new OwnS3Proxy();
    const problems: string[] = [];
    try {
      const [audio, big] = await Promise.all([readFile(faultsConfig.audio), bigAudio(), s3.start()]);
      const bin = await fakeEngine({
        audio: faultsConfig.audio,
        whisperBin: faultsConfig.whisperBin,
        whisperModel: faultsConfig.whisperModel,
        delayMs: faultsConfig.fakeEngineMs,
      });
      const { port, worker } = await ctx.apiAndWorker({ ...s3.appEnv(), WHISPER_BIN: bin });
      const acct = await ctx.account();
      const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
      const outages: number[] = [];
      let downAt = 0;
      const kill = async () => {
        await s3.kill();
        downAt = Date.now();
      };
      const restart = async () => {
        await s3.start();
        outages.push(Date.now() - downAt);
      };

      // Mid-upload: a 6 MiB chunk (a whole S3 part and a remainder) streams in when the store dies.
      const created = await sendBytes(
        port,
        'POST',
        `/v1/uploads?sha256=${sha(big)}`,
        acct,
        big.subarray(0, MiB),
      );
      if (created.status !== 201) throw new Error(`upload create: ${created.status}`);
      const bigId = created.body.data!.id;
      const cut = await sendBytes(
        port,
        'PUT',
        `/v1/uploads/${bigId}`,
        acct,
        big.subarray(MiB, 7 * MiB),
        kill,
      );
      const midChunk = { status: cut.status, code: cut.body.error?.code ?? cut.err ?? '' };
      const [post, get] = await Promise.all([
        sendBytes(port, 'POST', '/v1/uploads', acct, audio.subarray(0, 1000)),
        req(port, 'GET', `/v1/uploads/${bigId}`, acct),
      ]);
      await restart();
      const duringPost = {
        status: post.status,
        code: post.body.error?.code ?? '',
        retryable: post.body.error?.retryable === true,
      };
      const duringGet = get.status;
      // The chunk is refused (503, or its connection closed): either way it is not recorded.
      if (midChunk.status !== 503 && midChunk.status !== 0)
        problems.push(`chunk while the store died: ${midChunk.status}/${midChunk.code}`);
      if (duringPost.status !== 503 || !duringPost.retryable)
        problems.push(`POST while the store was down: ${duringPost.status}/${duringPost.code}`);
      if (duringGet !== 200) problems.push(`GET of the upload while the store was down: ${duringGet}`);
      // Resume from what the API recorded, as a client does.
      let at = (await req(port, 'GET', `/v1/uploads/${bigId}`, acct)).body.data?.receivedBytes ?? -1;
      const resumedFrom = at;
      for (let tries = 0; at >= 0 && at < big.length && tries < 10; tries++) {
        const r = await sendBytes(port, 'PUT', `/v1/uploads/${bigId}`, acct, big.subarray(at, at + 6 * MiB));
        if (r.status === 200) at = r.body.data!.receivedBytes!;
        else await sleep(500); // the store warming up: retryable
      }
      if (at !== big.length) problems.push(`the upload resumed to ${at} of ${big.length} bytes`);

      // Mid-job: four transcripts of one upload start; the store dies as the first job starts.
      const up = await sendBytes(port, 'POST', `/v1/uploads?sha256=${sha(audio)}`, acct, audio);
      if (up.status !== 201) throw new Error(`upload create: ${up.status}`);
      const creates = await Promise.all([
        ...Array.from({ length: 4 }, () =>
          ctx.create(port, acct, { url: undefined, uploadId: up.body.data!.id }),
        ),
        ctx.create(port, acct, { url: undefined, uploadId: bigId }),
      ]);
      if (creates.some((r) => r.status !== 201))
        problems.push(`creates: ${creates.map((r) => r.status).join(',')}`);
      await anyLog(worker, 'transcription started', 'a job to start');
      await kill();
      await sleep(2000);
      await restart();
      const recoveredAt = Date.now();
      if (!(await ctx.settle([acct.accountId], 90_000))) problems.push('did not settle within 90 s');
      const counts = await ctx.statusCounts([acct.accountId]);
      if ((counts.done ?? 0) !== creates.length)
        problems.push(`done ${counts.done ?? 0} of ${creates.length} (${fmt(counts)})`);
      // The API is the same process it was: a new upload goes in.
      const after = await waitFor(
        async () => {
          const r = await sendBytes(port, 'POST', '/v1/uploads', acct, audio.subarray(0, 1000));
          return r.status === 201 ? r : null;
        },
        { timeout: 10_000, interval: 250 },
      ).catch(() => null);
      if (!after) problems.push('no upload accepted within 10 s of the restart');
      problems.push(...(await ctx.invariants([acct.accountId])));
      const retried = worker.logs.filter((l) => l.msg === 'attempt failed; BullMQ will retry').length;
      return {
        problems,
        figures: fmt({
          midChunk: `${midChunk.status}${midChunk.code ? `:${midChunk.code}` : ''}`,
          resumedFrom,
          outagesMs: outages.join('/'),
          attemptsRetried: retried,
          settledInMs: Date.now() - recoveredAt,
          ...counts,
        }),
      };
    } finally {
      await s3.dispose();
    }
  },
);
