// The fault suite's settings, from the environment faults/run.sh sets (faults/README.md).
import path from 'node:path';
import { REPO_ROOT } from '../processes';
import { testAudio, testEngine } from '../test-env';

const env = process.env;

export const faultsConfig = {
  databaseUrl: env.DATABASE_URL ?? 'postgresql://hark@127.0.0.1:55432/hark_faults',
  secret: env.HARK_SECRET ?? 'faults-secret-0123456789abcdef',
  whisperBin: testEngine.whisperBin,
  whisperModel: testEngine.whisperModel,
  /** The audio every transcript fetches (11 s). */
  audio: testAudio.jfkWav,
  cancelRaces: Number(env.FAULTS_CANCEL_RACES ?? 100),
  killRounds: Number(env.FAULTS_KILL_ROUNDS ?? 10),
  /** Bound on waiting for the system to settle (machines shared with other test runs are slow). */
  // Generous: 40 real transcriptions on a loaded 2-core machine took 120 s; the check is that they settle.
  settleMs: Number(env.FAULTS_SETTLE_MS ?? 240_000),
  fakeEngineMs: Number(env.FAULTS_FAKE_ENGINE_MS ?? 400),
  /** FAULTS_NO_MOUNT=1: scenario 10 uses its fallback (an engine whose writes fail) even where it could mount a small disk. */
  noMount: env.FAULTS_NO_MOUNT === '1',
  /** FAULTS_LOG_DIR=dir keeps every process's JSON log lines, one file per scenario. */
  logDir: env.FAULTS_LOG_DIR,
};

/** Files a run cannot do without (the apps must be built first). */
export const requiredFiles = [
  faultsConfig.whisperBin,
  faultsConfig.whisperModel,
  faultsConfig.audio,
  path.join(REPO_ROOT, 'apps/api/dist/main.js'),
];
