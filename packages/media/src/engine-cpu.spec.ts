import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostCpu, isaOf, parseSystemInfo, probeEngineCpu } from './engine-cpu';
import type { RunProcess } from './process-runner';

// whisper-cli --system-info (scripts/whisper-patches/0008), as the builds print it.
const ZEN4_INFO =
  'system_info: WHISPER : COREML = 0 | OPENVINO = 0 | CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | OPENMP = 1 | REPACK = 1 | \n';
const AVX2_INFO =
  'system_info: WHISPER : COREML = 0 | OPENVINO = 0 | CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | OPENMP = 1 | REPACK = 1 | \n';
const LOADED = (variant: string) =>
  `load_backend: loaded CPU backend from /usr/local/lib/hark-whisper/libggml-cpu-${variant}.so\n`;

describe('parseSystemInfo', () => {
  it('a runtime-dispatch build: the variant it loaded and its features', () => {
    expect(parseSystemInfo(ZEN4_INFO, LOADED('zen4'))).toEqual({
      isa: 'avx512',
      variant: 'zen4',
      features: [
        'SSE3',
        'SSSE3',
        'AVX',
        'AVX2',
        'F16C',
        'FMA',
        'BMI2',
        'AVX512',
        'AVX512_VBMI',
        'AVX512_VNNI',
        'AVX512_BF16',
        'OPENMP',
        'REPACK',
      ],
      source: 'engine',
    });
    expect(parseSystemInfo(AVX2_INFO, LOADED('haswell'))).toMatchObject({ isa: 'avx2', variant: 'haswell' });
  });

  it('a build with its kernels built in: no variant; its own features, whatever the host has', () => {
    expect(parseSystemInfo(AVX2_INFO, '')).toMatchObject({ isa: 'avx2', variant: null });
  });

  it('features of other backends (CUDA) or switched off do not count', () => {
    const info =
      'system_info: WHISPER : COREML = 0 | OPENVINO = 0 | CUDA : ARCHS = 750,860 | USE_GRAPHS = 1 | AVX512 = 1 | CPU : SSE3 = 1 | AVX = 1 | AVX2 = 0 | \n';
    expect(parseSystemInfo(info, '')).toMatchObject({ isa: 'other', features: ['SSE3', 'AVX'] });
  });

  it('null for anything else: a whisper-cli without the option, a stand-in', () => {
    expect(parseSystemInfo('', 'error: unknown argument: --system-info\n')).toBeNull();
    expect(parseSystemInfo('hello\n', '')).toBeNull();
    expect(parseSystemInfo('system_info: WHISPER : COREML = 0 | \n', '')).toBeNull();
  });
});

describe('isaOf', () => {
  it('AVX-512, else AVX2, else other', () => {
    expect(isaOf(['AVX2', 'AVX512'])).toBe('avx512');
    expect(isaOf(['AVX', 'AVX2'])).toBe('avx2');
    expect(isaOf(['NEON', 'ARM_FMA'])).toBe('other');
  });
});

describe('probeEngineCpu', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hark-engine-cpu-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const cpuinfo = (flags: string) => {
    const path = join(dir, 'cpuinfo');
    writeFileSync(path, `processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse4_2 ${flags}\n\n`);
    return path;
  };
  const elf = () => {
    const path = join(dir, 'whisper-cli');
    writeFileSync(path, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]));
    return path;
  };
  const fakeRun = (stdout: string, stderr: string) => {
    const calls: (readonly string[])[] = [];
    const run: RunProcess = async (_command, args) => {
      calls.push(args);
      return { stdout, stderr, durationMs: 1 };
    };
    return { run, calls };
  };

  it('asks a compiled whisper-cli', async () => {
    const { run, calls } = fakeRun(ZEN4_INFO, LOADED('zen4'));
    await expect(probeEngineCpu(elf(), { run, cpuinfoPath: cpuinfo('avx2') })).resolves.toMatchObject({
      isa: 'avx512',
      variant: 'zen4',
      source: 'engine',
    });
    expect(calls).toEqual([['--system-info']]);
  });

  it('never runs a script standing in for the engine: the host flags decide', async () => {
    const script = join(dir, 'stand-in');
    writeFileSync(script, '#!/bin/sh\nkill -9 $PPID\n');
    const { run, calls } = fakeRun(ZEN4_INFO, '');
    await expect(probeEngineCpu(script, { run, cpuinfoPath: cpuinfo('avx avx2 avx512f') })).resolves.toEqual({
      isa: 'avx512',
      variant: null,
      features: ['AVX2', 'AVX512'],
      source: 'host',
    });
    expect(calls).toEqual([]);
  });

  it('a whisper-cli without the option, or one that fails: the host flags decide', async () => {
    const { run } = fakeRun('', 'error: unknown argument: --system-info\n');
    await expect(probeEngineCpu(elf(), { run, cpuinfoPath: cpuinfo('avx avx2') })).resolves.toMatchObject({
      isa: 'avx2',
      source: 'host',
    });
    const failing: RunProcess = () => Promise.reject(new Error('exited 1'));
    await expect(probeEngineCpu(elf(), { run: failing, cpuinfoPath: cpuinfo('avx') })).resolves.toMatchObject(
      {
        isa: 'other',
        source: 'host',
      },
    );
  });

  it('no /proc/cpuinfo (not Linux) and no answer: other', async () => {
    await expect(hostCpu(join(dir, 'missing'))).resolves.toEqual({
      isa: 'other',
      variant: null,
      features: [],
      source: 'host',
    });
  });
});
