import { copyFileSync, readFileSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { WhisperEngine, dtwPreset, probeEngineCpu, type WhisperResult } from '../src';
import { ensurePortableWhisperBuilt, ensureWhisperBuilt, scratchFolder, testEnv } from './media-test-env';

// The worker image's engine (docker/worker.Dockerfile: scripts/build-whisper.sh with
// WHISPER_CPU_VARIANTS=all), built here with the same flags: one libggml-cpu-<variant>.so per
// x86-64 instruction set, whisper-cli loading the best one this CPU runs when it starts.
jest.setTimeout(600_000);

/**
 * ggml's x86 CPU variants (ggml/src/CMakeLists.txt, GGML_CPU_ALL_VARIANTS) with the /proc/cpuinfo
 * flags each needs (ggml-cpu/arch/x86/cpu-feats.cpp) and its score there: the loader takes the
 * variant with the highest score among those the CPU runs. An oracle independent of the loader.
 */
const AVX512 = ['avx512f', 'avx512cd', 'avx512vl', 'avx512dq', 'avx512bw'];
const BASE = ['sse4_2', 'avx', 'f16c', 'fma', 'avx2', 'bmi2'];
const VARIANTS: [string, string[]][] = [
  ['x64', []],
  ['sse42', ['sse4_2']],
  ['sandybridge', ['sse4_2', 'avx']],
  ['ivybridge', ['sse4_2', 'avx', 'f16c']],
  ['piledriver', ['sse4_2', 'avx', 'f16c', 'fma']],
  ['haswell', BASE],
  ['skylakex', [...BASE, ...AVX512]],
  ['cannonlake', [...BASE, ...AVX512, 'avx512vbmi']],
  ['cascadelake', [...BASE, ...AVX512, 'avx512_vnni']],
  ['icelake', [...BASE, ...AVX512, 'avx512vbmi', 'avx512_vnni']],
  ['cooperlake', [...BASE, ...AVX512, 'avx512_vnni', 'avx512_bf16']],
  ['zen4', [...BASE, ...AVX512, 'avx512vbmi', 'avx512_vnni', 'avx512_bf16']],
  ['alderlake', [...BASE, 'avx_vnni']],
  ['sapphirerapids', [...BASE, ...AVX512, 'avx512vbmi', 'avx512_vnni', 'avx512_bf16', 'amx_int8']],
];
const SCORE: Record<string, number> = {
  fma: 1,
  f16c: 2,
  sse4_2: 4,
  bmi2: 8,
  avx: 16,
  avx2: 32,
  avx_vnni: 64,
  avx512f: 128,
  avx512vbmi: 256,
  avx512_bf16: 512,
  avx512_vnni: 1024,
  amx_int8: 2048,
};
const hostFlags = new Set(
  /^flags\s*:(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim().split(/\s+/),
);
function bestVariant(available: string[]): string {
  const runnable = VARIANTS.filter(
    ([name, flags]) => available.includes(name) && flags.every((f) => hostFlags.has(f)),
  );
  const score = (flags: string[]) => flags.reduce((s, f) => s + (SCORE[f] ?? 0), 1);
  return runnable.reduce((a, b) => (score(b[1]) > score(a[1]) ? b : a))[0];
}

const plain = (r: WhisperResult) =>
  r.text
    .toLowerCase()
    .replace(/[^a-z ]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

describe('the portable engine build (every CPU variant, chosen at start)', () => {
  const { dir } = scratchFolder();
  let portable = '';
  let variants: string[] = [];
  /** The portable build in a folder of its own that holds only the AVX2 variant (an AVX2 host). */
  let avx2Only = '';

  beforeAll(() => {
    portable = ensurePortableWhisperBuilt();
    const binDir = join(portable, '..');
    variants = readdirSync(binDir)
      .map((f) => /^libggml-cpu-(.+)\.so$/.exec(f)?.[1])
      .filter((v): v is string => v !== undefined);
    // A copy of the binary (ggml looks for variants beside the executable's real path, and the
    // libraries are found through $ORIGIN) with links to the libraries and to one variant.
    avx2Only = join(dir, 'whisper-cli');
    copyFileSync(portable, avx2Only);
    for (const f of readdirSync(binDir))
      if (/^lib.*\.so/.test(f) && (!f.startsWith('libggml-cpu-') || f === 'libggml-cpu-haswell.so'))
        symlinkSync(join(binDir, f), join(dir, f));
  }, 120 * 60_000);

  it('holds every x86-64 variant and loads the best this CPU runs', async () => {
    expect(variants.sort()).toEqual(VARIANTS.map(([name]) => name).sort());
    const cpu = await probeEngineCpu(portable);
    expect(cpu.source).toBe('engine');
    expect(cpu.variant).toBe(bestVariant(variants));
    expect(cpu.isa).toBe(AVX512.every((f) => hostFlags.has(f)) ? 'avx512' : 'avx2');
    expect(cpu.features).toContain('AVX2');
  });

  it('with only the AVX2 variant beside it (a host without AVX-512), loads that one', async () => {
    const cpu = await probeEngineCpu(avx2Only);
    expect(cpu).toMatchObject({ variant: 'haswell', isa: 'avx2', source: 'engine' });
    expect(cpu.features).not.toContain('AVX512');
  });

  it('transcribes real speech as the native build does, on either variant', async () => {
    const engine = (binaryPath: string) =>
      new WhisperEngine({
        binaryPath,
        modelPath: testEnv.baseModel,
        threads: 2,
        modelName: 'whisper-base',
        dtwPreset: preset,
      });
    const preset = await dtwPreset(testEnv.baseModel);
    const input = { wavPath: testEnv.jfkWav, language: 'en', wordTimestamps: 'dtw' as const };
    const native = await engine(ensureWhisperBuilt()).transcribe(input);
    expect(plain(native)).toMatch(/^and so my fellow americans ask not what your country can do for you/);
    for (const bin of [portable, avx2Only]) {
      const result = await engine(bin).transcribe(input);
      expect(plain(result)).toBe(plain(native));
      // DTW word times: within 0.1 s of the native build's, word by word.
      expect(result.words.map((w) => w.text)).toEqual(native.words.map((w) => w.text));
      for (const [i, w] of result.words.entries())
        expect(Math.abs(w.end - native.words[i]!.end)).toBeLessThan(0.1);
    }
  });
});
