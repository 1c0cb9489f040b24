import { open, readFile } from 'node:fs/promises';
import { findOnPath, runProcess, type RunProcess } from './process-runner';

/**
 * The instruction-set classes of the engine's CPU kernels (the worker logs its own): `avx512` for
 * kernels built for AVX-512, `avx2` for AVX2 without it, `other` for anything else (older x86,
 * ARM).
 */
export const ENGINE_ISAS = ['avx512', 'avx2', 'other'] as const;
export type EngineIsa = (typeof ENGINE_ISAS)[number];

/** The CPU kernels whisper-cli runs, as it reports them (`whisper-cli --system-info`). */
export interface EngineCpu {
  isa: EngineIsa;
  /**
   * The CPU backend a runtime-dispatch build loaded (`haswell` for AVX2, `skylakex`, `icelake`,
   * `zen4`, ... for AVX-512: scripts/build-whisper.sh, WHISPER_CPU_VARIANTS=all); null for a build
   * with one set of kernels built in.
   */
  variant: string | null;
  /** The features ggml lists as on (`AVX2`, `AVX512`, `AVX512_VNNI`, ...). */
  features: string[];
  /** `engine`: reported by whisper-cli; `host`: it could not say, so the host CPU's flags decided. */
  source: 'engine' | 'host';
}

/** The ISA class of a set of ggml feature names. */
export function isaOf(features: readonly string[]): EngineIsa {
  if (features.includes('AVX512')) return 'avx512';
  if (features.includes('AVX2')) return 'avx2';
  return 'other';
}

/**
 * Parses `whisper-cli --system-info` (scripts/whisper-patches/0008): stdout's `system_info:` line
 * (`CPU : SSE3 = 1 | AVX2 = 1 | ... |`) and, from a runtime-dispatch build, stderr's
 * `load_backend: loaded CPU backend from .../libggml-cpu-<variant>.so`. Null when stdout holds no
 * CPU features (a whisper-cli without the option, or not whisper-cli at all).
 */
export function parseSystemInfo(stdout: string, stderr: string): EngineCpu | null {
  const line = stdout.split('\n').find((l) => l.startsWith('system_info:'));
  if (!line) return null;
  // `BACKEND : NAME = value | NAME = value | OTHER : NAME = value | ...`
  const features: string[] = [];
  let backend = '';
  for (const item of line.slice('system_info:'.length).split('|')) {
    const m = /^\s*(?:(\S+) : )?([A-Za-z0-9_]+) = (\S+)\s*$/.exec(item);
    if (!m) continue;
    if (m[1]) backend = m[1];
    if (backend === 'CPU' && m[3] === '1') features.push(m[2]!);
  }
  if (features.length === 0) return null;
  const variant = /loaded CPU backend from \S*libggml-cpu-([A-Za-z0-9_.]+?)\.so\b/.exec(stderr)?.[1] ?? null;
  return { isa: isaOf(features), variant, features, source: 'engine' };
}

/** ggml's names for the host CPU's flags in /proc/cpuinfo that decide the ISA class. */
const HOST_FLAGS: Record<string, string> = { avx2: 'AVX2', avx512f: 'AVX512' };

/** The host CPU's ISA class from /proc/cpuinfo (`other` where it cannot be read). */
export async function hostCpu(cpuinfoPath = '/proc/cpuinfo'): Promise<EngineCpu> {
  const text = await readFile(cpuinfoPath, 'utf8').catch(() => '');
  const flags = new Set(/^flags\s*:(.*)$/m.exec(text)?.[1]?.trim().split(/\s+/) ?? []);
  const features = Object.entries(HOST_FLAGS)
    .filter(([flag]) => flags.has(flag))
    .map(([, name]) => name);
  return { isa: isaOf(features), variant: null, features, source: 'host' };
}

/** Whether the file starts as an ELF executable does (a compiled whisper-cli, not a script). */
async function isElf(path: string): Promise<boolean> {
  const file = await open(path, 'r').catch(() => null);
  if (!file) return false;
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await file.read(head, 0, 4, 0);
    return bytesRead === 4 && head.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } finally {
    await file.close();
  }
}

export interface ProbeEngineCpuOptions {
  /** Process runner; tests pass a fake. Default: `runProcess`. */
  run?: RunProcess;
  /** Default: /proc/cpuinfo. */
  cpuinfoPath?: string;
  /** Default: 10 s. */
  timeoutMs?: number;
}

/**
 * The CPU kernels `binaryPath` runs: asked of whisper-cli itself (`--system-info`, which loads no
 * model), so a runtime-dispatch build names the variant it chose and a build with fixed kernels
 * its own instruction sets (a GGML_NATIVE=OFF build runs AVX2 kernels on an AVX-512 host). Only a
 * compiled binary is asked: a script standing in for the engine (tests) is never run here, and
 * the host's flags decide. So do a binary without the option and one that fails: never fatal.
 */
export async function probeEngineCpu(
  binaryPath: string,
  options: ProbeEngineCpuOptions = {},
): Promise<EngineCpu> {
  // A bare command name is looked up on PATH, as spawn does.
  const file = binaryPath.includes('/') ? binaryPath : findOnPath(binaryPath);
  if (file && (await isElf(file))) {
    const result = await (options.run ?? runProcess)(binaryPath, ['--system-info'], {
      timeoutMs: options.timeoutMs ?? 10_000,
    }).catch(() => null);
    const cpu = result && parseSystemInfo(result.stdout, result.stderr);
    if (cpu) return cpu;
  }
  return hostCpu(options.cpuinfoPath);
}
