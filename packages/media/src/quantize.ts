import { randomUUID } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { readModelHeader } from './model-header';
import { checkModelCopy } from './model-layout';
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
  /**
   * What happened: `made` (quantised now), `cached` (a kept copy that passed its check), `remade`
   * (a kept copy failed its check and was made again), or why the model is used as it is.
   */
  outcome: 'made' | 'cached' | 'remade' | 'off' | 'already-quantised';
  /** With `remade`: what was wrong with the kept copy. */
  rejected?: string;
}

/** What a copy was made from, and its length once checked; kept beside it as `<copy>.stamp`. */
interface Stamp {
  source: string;
  sourceBytes: number;
  sourceMtimeMs: number;
  quantize: QuantizeType;
  bytes: number;
}

/**
 * A temporary file older than this is a make that died (a live whisper-quantize writes to its
 * file all along): removed when the next make starts.
 */
const ABANDONED_MS = 10 * 60_000;

/**
 * The model the engine runs: a quantised copy of `modelPath`, made once with whisper-quantize and
 * kept in `cacheDir`, so a quantised file is never something to commit or download. A model that
 * is already quantised is used as it is. Throws when the copy cannot be made whole; the caller
 * decides whether to go on with the original.
 *
 * whisper-quantize exits 0 even when its writes fail (a full disk, `/dev/full`), and a cut-short
 * copy that were kept would fail every job. So the copy is written under a name of its own (the
 * workers sharing a cache folder each write their own), checked against the model (every tensor
 * there and whole, nothing after: `checkModelCopy`) before it is renamed into place and stamped,
 * and checked again, with its stamped length, each time it is picked up at start; one that fails
 * is made again.
 */
export async function prepareModel(options: PrepareModelOptions): Promise<PreparedModel> {
  const { modelPath, quantize, cacheDir } = options;
  if (quantize === 'off') return { path: modelPath, outcome: 'off' };
  const { ftype } = await readModelHeader(modelPath);
  // 0 f32, 1 f16; anything else is already quantised.
  if (ftype !== 0 && ftype !== 1) return { path: modelPath, outcome: 'already-quantised' };
  const source = await stat(modelPath);
  const out = join(cacheDir, `${basename(modelPath, '.bin')}-${quantize}.bin`);
  const wanted = { source: modelPath, sourceBytes: source.size, sourceMtimeMs: source.mtimeMs, quantize };
  const stamp = await readStamp(out);
  let rejected: string | undefined;
  if (stamp && sameSource(stamp, wanted)) {
    rejected = (await checkKept(modelPath, out, stamp.bytes)) ?? undefined;
    if (!rejected) return { path: out, outcome: 'cached' };
  }
  await mkdir(cacheDir, { recursive: true });
  await removeAbandoned(out);
  const tmp = `${out}.${randomUUID()}.tmp`;
  try {
    await (options.run ?? runProcess)(options.quantizeBin, [modelPath, tmp, quantize], {
      captureStdout: false,
    });
    const problem = await checkModelCopy(modelPath, tmp);
    if (problem) throw new Error(`whisper-quantize wrote an incomplete copy (${problem})`);
    const { size } = await stat(tmp);
    await rename(tmp, out);
    await writeAtomically(`${out}.stamp`, JSON.stringify({ ...wanted, bytes: size } satisfies Stamp));
  } finally {
    await rm(tmp, { force: true });
  }
  return rejected ? { path: out, outcome: 'remade', rejected } : { path: out, outcome: 'made' };
}

/** The `ftype` field of a ggml whisper model (0 f32, 1 f16, else quantised). */
export async function readModelFtype(modelPath: string): Promise<number> {
  return (await readModelHeader(modelPath)).ftype;
}

/** Why the kept copy cannot be used, or null: its stamped length, then its structure. */
async function checkKept(modelPath: string, out: string, bytes: number): Promise<string | null> {
  const size = await stat(out).then(
    (s) => (s.isFile() ? s.size : null),
    () => null,
  );
  if (size === null) return 'the copy is missing';
  if (size !== bytes) return `the copy is ${size} bytes, ${bytes} when it was made`;
  return checkModelCopy(modelPath, out);
}

async function readStamp(out: string): Promise<Stamp | null> {
  const text = await readFile(`${out}.stamp`, 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    const s = JSON.parse(text) as Partial<Stamp>;
    return typeof s.bytes === 'number' && typeof s.source === 'string' ? (s as Stamp) : null;
  } catch {
    // An older version's plain-text stamp: made again, as it holds no length to check.
    return null;
  }
}

function sameSource(a: Omit<Stamp, 'bytes'>, b: Omit<Stamp, 'bytes'>): boolean {
  return (
    a.source === b.source &&
    a.sourceBytes === b.sourceBytes &&
    a.sourceMtimeMs === b.sourceMtimeMs &&
    a.quantize === b.quantize
  );
}

/** Written beside, then renamed: a reader never sees half a stamp. */
async function writeAtomically(path: string, text: string): Promise<void> {
  const tmp = `${path}.${randomUUID()}.tmp`;
  try {
    await writeFile(tmp, text);
    await rename(tmp, path);
  } finally {
    await rm(tmp, { force: true });
  }
}

/** Temporary copies of `out` that a make which died left behind (see `ABANDONED_MS`). */
async function removeAbandoned(out: string): Promise<void> {
  const prefix = `${basename(out)}.`;
  const names = await readdir(dirname(out)).catch(() => [] as string[]);
  const cutoff = Date.now() - ABANDONED_MS;
  for (const name of names.filter((n) => n.startsWith(prefix) && n.endsWith('.tmp'))) {
    const path = join(dirname(out), name);
    const s = await stat(path).catch(() => null);
    if (s && s.mtimeMs < cutoff) await rm(path, { force: true });
  }
}
