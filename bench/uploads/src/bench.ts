// See run.sh. Figures are printed, never asserted.
import { randomBytes } from 'node:crypto';
import { open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { createDb } from '@hark/db';
import { createTestAccount, s3TestBucket, startApp } from '@hark/testing';

const MiB = 1024 * 1024;
const CHUNK = 16 * MiB;
// `--smoke`: one chunk, the test command's check that the bench runs to its figures.
const TOTAL = Number(process.env.BENCH_UPLOAD_MIB ?? (process.argv.includes('--smoke') ? 16 : 512)) * MiB;

async function peakRssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

async function baseline(dir: string, chunk: Buffer): Promise<number> {
  const file = path.join(dir, 'baseline.bin');
  const t0 = process.hrtime.bigint();
  const fh = await open(file, 'w');
  for (let off = 0; off < TOTAL; off += CHUNK) {
    await fh.write(chunk, 0, chunk.length, off);
    await fh.sync(); // the API fsyncs every chunk before recording it
  }
  await fh.close();
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  await rm(file);
  return TOTAL / MiB / s;
}

/** Uploads TOTAL bytes through a fresh API process on `env`'s store: MB/s and peak RSS. */
async function throughApi(env: Record<string, string>, auth: Record<string, string>, chunk: Buffer) {
  const api = startApp('api', { PORT: '0', HARK_REDIS_PREFIX: 'hark-bench-up', ...env });
  try {
    const port = (await api.waitForLog('api listening')).port as number;
    const base = `http://127.0.0.1:${port}/v1/uploads`;
    const created = await fetch(base, { method: 'POST', headers: auth });
    const id = ((await created.json()) as { data: { id: string } }).data.id;
    const t0 = process.hrtime.bigint();
    for (let off = 0; off < TOTAL; off += CHUNK) {
      const res = await fetch(`${base}/${id}`, { method: 'PUT', headers: auth, body: chunk });
      if (res.status !== 200) throw new Error(`PUT answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    }
    const mbps = TOTAL / MiB / (Number(process.hrtime.bigint() - t0) / 1e9);
    return { id, mbps, rss: await peakRssMb(api.child.pid!) };
  } finally {
    api.kill('SIGTERM');
    await api.exited;
  }
}

async function main(): Promise<void> {
  const dir = process.env.HARK_BENCH_DIR!;
  const storage = path.join(dir, 'storage');
  const db = createDb({ databaseUrl: process.env.DATABASE_URL!, poolSize: 2 });
  try {
    const acct = await createTestAccount(db, process.env.HARK_SECRET!, { toppedUp: true });
    const chunk = randomBytes(CHUNK);
    const local = await throughApi({ HARK_STORAGE_DIR: storage }, acct.auth, chunk);
    await rm(path.join(storage, local.id), { force: true });
    const disk = await baseline(dir, chunk);
    console.log(`upload ${TOTAL / MiB} MiB in ${CHUNK / MiB} MiB chunks over loopback`);
    console.log(
      `  hark API, local driver: ${local.mbps.toFixed(1)} MB/s, API peak RSS ${local.rss.toFixed(0)} MB (target < 200 MB)`,
    );
    console.log(`  fsync'ed disk write:    ${disk.toFixed(1)} MB/s`);
    console.log(`  ratio:                  ${(local.mbps / disk).toFixed(2)} (target >= 0.5)`);
    if (process.env.HARK_TEST_S3_ENDPOINT) {
      // run.sh started S3Proxy (filesystem backend, same disk); BENCH_S3=0 skips this.
      const bucket = await s3TestBucket();
      const s3 = await throughApi({ HARK_STORAGE_DIR: storage, ...bucket.env }, acct.auth, chunk);
      console.log(
        `  hark API, S3 driver (S3Proxy): ${s3.mbps.toFixed(1)} MB/s, API peak RSS ${s3.rss.toFixed(0)} MB`,
      );
    }
  } finally {
    await db.$disconnect();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
