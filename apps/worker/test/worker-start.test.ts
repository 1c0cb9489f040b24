import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startApp } from '@hark/testing';

// The built worker refuses to start on a configuration that would fail every job, and says why.
jest.setTimeout(60_000);

it('WHISPER_VAD=on with no readable VAD model: exit 1 before any job, naming the variable and the file', async () => {
  const w = startApp('worker', {
    WHISPER_VAD: 'on',
    WHISPER_VAD_MODEL: '/nonexistent/ggml-silero-v5.1.2.bin',
    HARK_METRICS_PORT: '0',
  });
  expect(await w.exited).toBe(1);
  const fatal = w.logs.find((l) => l.msg === 'worker failed to start');
  expect(fatal).toMatchObject({ level: 'fatal', app: 'worker' });
  expect(fatal!.err).toMatch(
    /WHISPER_VAD is on but its model \/nonexistent\/ggml-silero-v5\.1\.2\.bin cannot be read/,
  );
  expect(w.logs.some((l) => l.msg === 'worker ready')).toBe(false);
});

it('logs the CPU kernels its whisper-cli runs here, asked of the binary itself', async () => {
  // The VAD check comes after the engine's, so this start stops there, with the line written.
  const w = startApp('worker', {
    WHISPER_VAD: 'on',
    WHISPER_VAD_MODEL: '/nonexistent/ggml-silero-v5.1.2.bin',
    HARK_METRICS_PORT: '0',
  });
  expect(await w.exited).toBe(1);
  const line = w.logs.find((l) => l.msg === 'engine CPU');
  // The test build is native (scripts/build-whisper.sh): the host's own instruction sets, no variant.
  const hostAvx512 = /^flags\s*:.*\bavx512f\b/m.test(readFileSync('/proc/cpuinfo', 'utf8'));
  expect(line).toMatchObject({
    level: 30, // info
    source: 'engine',
    variant: null,
    isa: hostAvx512 ? 'avx512' : 'avx2',
  });
  expect(String(line!.features).split(' ')).toContain('AVX2');
});

describe('an engine that cannot run: exit 1 before any job, naming the variable and the file', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'hark-worker-start-'));
  const notExecutable = path.join(scratch, 'whisper-cli');
  writeFileSync(notExecutable, '#!/bin/sh\nexit 0\n', { mode: 0o644 });
  const notAModel = path.join(scratch, 'ggml-base.en.bin');
  writeFileSync(notAModel, '<html>404 Not Found</html>\n'.repeat(4));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it.each([
    [
      'WHISPER_BIN missing',
      { WHISPER_BIN: '/nonexistent/whisper-cli' },
      /WHISPER_BIN .*\/nonexistent\/whisper-cli/,
    ],
    [
      'WHISPER_BIN not executable',
      { WHISPER_BIN: notExecutable },
      /WHISPER_BIN .*whisper-cli.* not executable/,
    ],
    ['WHISPER_BIN a folder', { WHISPER_BIN: scratch }, /WHISPER_BIN .*hark-worker-start-/],
    [
      'WHISPER_MODEL missing',
      { WHISPER_MODEL: '/nonexistent/ggml-base.en.bin' },
      /WHISPER_MODEL .*\/nonexistent\/ggml-base\.en\.bin/,
    ],
    [
      'WHISPER_MODEL not a whisper model',
      { WHISPER_MODEL: notAModel },
      /WHISPER_MODEL .*ggml-base\.en\.bin.* not a ggml whisper model/,
    ],
  ])('%s', async (_name, env, message) => {
    const w = startApp('worker', {
      ...env,
      HARK_METRICS_PORT: '0',
      HARK_RETENTION_SWEEP_MS: '0',
      HARK_RECONCILE_INTERVAL_MS: '0',
      // Its own queue: a worker that started anyway takes no other test's job.
      HARK_REDIS_PREFIX: `hark-wstart-${process.pid}`,
    });
    const timer = new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 20_000));
    const code = await Promise.race([w.exited, timer]);
    w.kill();
    expect(code).toBe(1);
    const fatal = w.logs.find((l) => l.msg === 'worker failed to start');
    expect(fatal).toMatchObject({ level: 'fatal', app: 'worker' });
    expect(fatal!.err).toMatch(message);
    expect(w.logs.some((l) => l.msg === 'worker ready')).toBe(false);
  });
});
