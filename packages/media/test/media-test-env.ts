import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// The only place the media tests read the environment.
const repo = resolve(__dirname, '../../..');
const shared = process.env['HARK_SHARED_DIR'] ?? resolve(repo, '../shared');
// scripts/test.sh exports HARK_MODELS_DIR and WHISPER_MODEL; these defaults match it.
const modelsDir = process.env['HARK_MODELS_DIR'] ?? join(shared, 'models');

export const testEnv = {
  /** whisper-cli as scripts/build-whisper.sh writes it. */
  whisperBin: process.env['WHISPER_BIN'] ?? join(repo, '.hark/whisper/bin/whisper-cli'),
  /** Loads and runs but transcribes to nothing (its tensors are empty). */
  whisperModel: process.env['WHISPER_MODEL'] ?? join(modelsDir, 'for-tests-ggml-base.en.bin'),
  /** A multilingual test model: language detection runs, on noise. */
  whisperMultilingualModel: join(modelsDir, 'for-tests-ggml-tiny.bin'),
  jfkWav: join(shared, 'audio/jfk.wav'),
  speech60Wav: join(shared, 'audio/speech-60s.wav'),
};

/**
 * Builds whisper-cli with the repo script when the default binary is missing (minutes the first
 * time, under a second afterwards). A WHISPER_BIN that does not exist is an error, not a build.
 */
export function ensureWhisperBuilt(): string {
  if (existsSync(testEnv.whisperBin)) return testEnv.whisperBin;
  if (process.env['WHISPER_BIN']) throw new Error(`WHISPER_BIN=${testEnv.whisperBin} does not exist`);
  const build = spawnSync('bash', [join(repo, 'scripts/build-whisper.sh')], { stdio: 'inherit' });
  if (build.status !== 0 || !existsSync(testEnv.whisperBin))
    throw new Error('scripts/build-whisper.sh failed');
  return testEnv.whisperBin;
}

/** Runs a shell-free command for fixtures (ffmpeg, sox) and fails the test loudly if it fails. */
export function make(command: string, args: string[]): void {
  const result = spawnSync(command, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed: ${result.stderr}`);
}

/** `-f lavfi -i <spec>`: an input ffmpeg synthesises. */
export const lavfi = (spec: string): string[] => ['-f', 'lavfi', '-i', spec];

/** Makes a fixture with ffmpeg (`-v error -y`, then `args`, arrays spread), failing loudly. */
export function ffmpeg(...args: (string | string[])[]): void {
  make('ffmpeg', ['-v', 'error', '-y', ...args.flat()]);
}

/** A scratch folder for one test file; call the returned cleanup in afterAll. */
export function scratchDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'hark-media-test-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A scratch folder for the block it is called in (a describe), removed after it: the folder, and
 * the path of a file in it.
 */
export function scratchFolder(): { dir: string; file: (name: string) => string } {
  const { dir, cleanup } = scratchDir();
  afterAll(cleanup);
  return { dir, file: (name) => join(dir, name) };
}

/** True while a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
