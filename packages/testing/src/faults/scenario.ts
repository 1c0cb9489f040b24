// One fault scenario = one jest test in its own file (faults/scenarios/*.fault.ts): a fresh
// context (own Redis, audio server, apps), the scenario's checks collected as problems, then every
// process it started killed. The test fails with the list of problems; the row it leaves in
// FAULTS_REPORT makes the table that global-teardown.ts prints after the run.
import { appendFileSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type Db, createDb } from '@hark/db';
import { type TestAccount, createTestAccount } from '../factories';
import type { AppProcess } from '../processes';
import { invariants, settle, statusCounts } from './checks';
import { faultsConfig } from './config';
import { type Env, Fleet, anyLog, writeProcessLogs } from './fleet';
import { type Res, req } from './http';
import { serveFile } from './loopback';
import { OwnRedis } from './own-redis';

export interface Outcome {
  problems: string[];
  figures: string;
}

/** One row of the report (FAULTS_REPORT, JSON lines). */
export interface ReportRow {
  name: string;
  ok: boolean;
  secs: number;
  figures: string;
  problems: string[];
}

export interface FaultContext {
  db: Db;
  redis: OwnRedis;
  fleet: Fleet;
  /** The loopback URL of the test audio. */
  audioUrl: string;
  /** Settings for all apps of the scenario: a fresh Redis prefix, storage and tmp folders. */
  baseEnv(extra?: Env): Promise<Env>;
  /** A fresh topped-up account. */
  account(credits?: number | string): Promise<TestAccount>;
  /** POST /v1/transcripts for the test audio, with `extra` in the body. */
  create(
    port: number,
    acct: TestAccount,
    extra?: Record<string, unknown>,
    headers?: Record<string, string>,
  ): Promise<Res>;
  /** An API and a worker on `baseEnv(extra)`, both ready. */
  apiAndWorker(extra?: Env): Promise<{ env: Env; port: number; worker: AppProcess }>;
  /** Whether nothing is processing within `timeout` (default FAULTS_SETTLE_MS). */
  settle(accountIds: string[], timeout?: number): Promise<boolean>;
  invariants(accountIds: string[], opts?: { receiverUp?: boolean }): Promise<string[]>;
  statusCounts(accountIds: string[]): Promise<Record<string, number>>;
  /**
   * API and worker (and dispatcher) with the reconciler on fast settings, `n` creates sent with
   * `extra`, and a job already running: the starting point of the outage scenarios.
   */
  jobsRunning(
    n: number,
    extra?: Record<string, unknown>,
    withDispatcher?: boolean,
  ): Promise<{ port: number; acct: TestAccount; problems: string[]; rs: Res[] }>;
}

async function openContext(): Promise<FaultContext & { close(): Promise<void> }> {
  const { databaseUrl, secret } = faultsConfig;
  if (!/hark_faults/.test(databaseUrl))
    throw new Error(`refusing to run on a database other than hark_faults: ${databaseUrl}`);
  const db = createDb({ databaseUrl, poolSize: 4 });
  const redis = new OwnRedis();
  await redis.start();
  const files = await serveFile(faultsConfig.audio, 'jfk.wav');
  const fleet = new Fleet();
  const roots: string[] = []; // baseEnv's folders, removed on close (after the fleet is killed)
  const ctx: FaultContext = {
    db,
    redis,
    fleet,
    audioUrl: files.url,
    async baseEnv(extra = {}) {
      const root = await mkdtemp(path.join(tmpdir(), 'hark-faults-'));
      roots.push(root);
      return {
        DATABASE_URL: databaseUrl,
        REDIS_URL: redis.url,
        HARK_SECRET: secret,
        HARK_REDIS_PREFIX: `hark-faults-${randomBytes(3).toString('hex')}`,
        HARK_STORAGE_DIR: path.join(root, 'storage'),
        HARK_TMP_DIR: path.join(root, 'tmp'),
        WHISPER_BIN: faultsConfig.whisperBin,
        WHISPER_MODEL: faultsConfig.whisperModel,
        WHISPER_THREADS: '1',
        HARK_WORKER_CONCURRENCY: '2',
        HARK_JOB_LOCK_MS: '2000',
        HARK_STALLED_INTERVAL_MS: '1000',
        HARK_RETENTION_SWEEP_MS: '0',
        HARK_RECONCILE_INTERVAL_MS: '0',
        ALLOW_PRIVATE_URLS: 'true',
        PORT: '0',
        HOST: '127.0.0.1',
        HARK_RATE_LIMIT_TRANSCRIPTS: '100000',
        HARK_RATE_LIMIT_OTHER: '100000',
        HARK_WEBHOOK_TIME_SCALE: '0.001',
        ...extra,
      };
    },
    account: (credits = 100_000) => createTestAccount(db, secret, { toppedUp: true, credits }),
    create: (port, acct, extra = {}, headers = {}) =>
      req(port, 'POST', '/v1/transcripts', acct, { url: files.url, ...extra }, headers),
    async apiAndWorker(extra = {}) {
      const env = await ctx.baseEnv(extra);
      const { port } = await fleet.api(env);
      return { env, port, worker: await fleet.worker(env) };
    },
    settle: (accountIds, timeout = faultsConfig.settleMs) => settle(db, accountIds, timeout),
    invariants: (accountIds, opts) => invariants(db, accountIds, opts),
    statusCounts: (accountIds) => statusCounts(db, accountIds),
    async jobsRunning(n, extra = {}, withDispatcher = false) {
      const {
        env,
        port,
        worker: w,
      } = await ctx.apiAndWorker({
        HARK_RETENTION_SWEEP_MS: '1000',
        HARK_RECONCILE_INTERVAL_MS: '1000',
        HARK_RECONCILE_GRACE_MS: '500',
      });
      if (withDispatcher) await fleet.dispatcher(env);
      const acct = await ctx.account();
      const problems: string[] = [];
      const rs = await Promise.all(Array.from({ length: n }, () => ctx.create(port, acct, extra)));
      if (rs.some((r) => r.status !== 201)) problems.push(`creates ${rs.map((r) => r.status).join(',')}`);
      await anyLog(w, 'transcription started', 'a job started');
      return { port, acct, problems, rs };
    },
  };
  return {
    ...ctx,
    async close() {
      await files.close();
      await redis.dispose();
      await db.$disconnect();
      await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
    },
  };
}

/** No scenario has a time limit of its own; this only stops a hung one from holding the run forever. */
const SCENARIO_TIMEOUT_MS = 30 * 60_000;

/**
 * Declares the scenario `name` (its number first: "4a ...", which FAULTS_LOG_DIR's file names
 * and the report use) as one jest test.
 */
export function faultScenario(name: string, run: (ctx: FaultContext) => Promise<Outcome>): void {
  it(
    name,
    async () => {
      const st = Date.now();
      let ctx: Awaited<ReturnType<typeof openContext>> | undefined;
      let out: Outcome;
      try {
        ctx = await openContext();
        out = await run(ctx);
      } catch (e) {
        out = { problems: [`threw: ${(e as Error).message.slice(0, 400)}`], figures: '' };
      }
      if (ctx) {
        // Every process a scenario started goes away before the next one.
        out.problems.push(...ctx.fleet.crashes);
        const procs = await ctx.fleet.killAll();
        if (faultsConfig.logDir)
          writeProcessLogs(procs, faultsConfig.logDir, `scenario-${name.split(' ')[0]}.jsonl`);
        await ctx.close();
      }
      const row: ReportRow = {
        name,
        ok: out.problems.length === 0,
        secs: (Date.now() - st) / 1000,
        figures: out.figures,
        problems: out.problems,
      };
      if (process.env.FAULTS_REPORT) appendFileSync(process.env.FAULTS_REPORT, JSON.stringify(row) + '\n');
      // Straight to fd 1: jest's reporter buffers process.stdout and dropped the last file's line.
      writeSync(
        1,
        `${row.ok ? 'PASS' : 'FAIL'} ${name} (${row.secs.toFixed(1)} s) ${row.figures}\n` +
          out.problems
            .slice(0, 10)
            .map((p) => `    - ${p}\n`)
            .join(''),
      );
      expect(out.problems).toEqual([]);
    },
    SCENARIO_TIMEOUT_MS,
  );
}
