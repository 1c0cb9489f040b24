import { rename, rm, stat, mkdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { readModelHeader } from './model-header';
import { runProcess, type RunProcess } from './process-runner';

/** whisper-quantize types the worker accepts; `off` runs the model as it is. */
export const QUANTIZE_TYPES = ['off', 'q8_0', 'q5_1', 'q5_0', 'q4_0'] as const;
export type QuantizeType = (typeof QUANTIZE_TYPES)[number];

export interface PrepareModelOptions {
  /** The configured ggml model (as published: f16). */
  modelPath: string;
  /** What to make of it. `off` returns `modelPath` unchanged. */
  quantize: QuantizeType;
  /** whisper-quantize, built beside whisper-cli by scripts/build-whisper.sh. */
  quantizeBin: string;
  /** Where quantised copies are kept between starts. */
  cacheDir: string;
  /** Process runner; tests pass a fake. Default: `runProcess`. */
  run?: RunProcess;
}

export interface PreparedModel {
  /** The file whisper-cli is given. */
  path: string;
  /** What happened: `made` (quantised now), `cached`, or why the model is used as it is. */
  outcome: 'made' | 'cached' | 'off' | 'already-quantised';
}

/**
 * The model the engine runs: a quantised copy of `modelPath`, made once with whisper-quantize and
 * kept in `cacheDir` (stamped with the source's path, size and time), so a quantised file is
 * never something to commit or download. A model that is already quantised is used as it is.
 * Throws when whisper-quantize fails; the caller decides whether to go on with the original.
 */
export async function prepareModel(options: PrepareModelOptions): Promise<PreparedModel> {
  const { modelPath, quantize, quantizeBin, cacheDir } = options;
  if (quantize === 'off') return { path: modelPath, outcome: 'off' };
  const ftype = await readModelFtype(modelPath);
  // 0 f32, 1 f16; anything else is already quantised.
  if (ftype !== 0 && ftype !== 1) return { path: modelPath, outcome: 'already-quantised' };
  const source = await stat(modelPath);
  const out = join(cacheDir, `${basename(modelPath, '.bin')}-${quantize}.bin`);
  const stamp = `${modelPath} ${source.size} ${source.mtimeMs} ${quantize}`;
  if ((await readFile(`${out}.stamp`, 'utf8').catch(() => null)) === stamp) {
    if (
      await stat(out).then(
        (s) => s.isFile(),
        () => false,
      )
    )
      return { path: out, outcome: 'cached' };
  }
  await mkdir(cacheDir, { recursive: true });
  // Per process: two workers starting together each write their own file and the rename wins.
  const tmp = `${out}.${process.pid}.tmp`;
  try {
    await (options.run ?? runProcess)(quantizeBin, [modelPath, tmp, quantize], { captureStdout: false });
    await rename(tmp, out);
  } finally {
    await rm(tmp, { force: true });
  }
  await writeFile(`${out}.stamp`, stamp);
  return { path: out, outcome: 'made' };
}

/** The `ftype` field of a ggml whisper model (0 f32, 1 f16, else quantised). */
export async function readModelFtype(modelPath: string): Promise<number> {
  return (await readModelHeader(modelPath)).ftype;
}
