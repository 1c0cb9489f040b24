import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { MediaAbortError, ProcessError, findPrlimit, isAbortError, runProcess } from '../src';
import { isAlive } from './media-test-env';

describe('runProcess (real processes)', () => {
  it('resolves with stdout and stderr of a process that exits 0', async () => {
    const result = await runProcess('sh', ['-c', 'echo out; echo err >&2']);
    expect(result).toMatchObject({ stdout: 'out\n', stderr: 'err\n' });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('passes arguments without a shell', async () => {
    const { stdout } = await runProcess('printf', ['%s|', '$(id)', 'a b', "it's"]);
    expect(stdout).toBe("$(id)|a b|it's|");
  });

  it('gives the command line to the debug logger', async () => {
    const lines: string[] = [];
    await runProcess('echo', ['a b', 'c'], { debug: (line) => lines.push(line) });
    expect(lines).toEqual(["echo 'a b' c"]);
  });

  it('rejects a non-zero exit with the last 8 KB of stderr attached', async () => {
    // 20 000 bytes of stderr, then a final line that must survive in the tail.
    const script = 'head -c 20000 /dev/zero | tr "\\0" x >&2; echo >&2; echo "fatal: the end" >&2; exit 3';
    const error = (await runProcess('sh', ['-c', script]).catch((e: unknown) => e)) as ProcessError;
    expect(error).toBeInstanceOf(ProcessError);
    expect(error).toMatchObject({ exitCode: 3, signal: null, spawnErrorCode: null });
    expect(error.stderr.length).toBe(8 * 1024);
    expect(error.stderr.endsWith('fatal: the end\n')).toBe(true);
    expect(error.message).toBe('sh exited with code 3: fatal: the end');
  });

  it('rejects a missing binary with its errno code', async () => {
    await expect(runProcess('/nonexistent/hark-binary', [])).rejects.toMatchObject({
      name: 'ProcessError',
      spawnErrorCode: 'ENOENT',
    });
  });

  it('discards stdout when asked to', async () => {
    await expect(runProcess('echo', ['x'], { captureStdout: false })).resolves.toMatchObject({ stdout: '' });
  });

  it('kills a process that writes more stdout than allowed, and says so', async () => {
    await expect(runProcess('yes', [], { maxStdoutBytes: 1024 * 1024 })).rejects.toMatchObject({
      signal: 'SIGKILL',
      stdoutOverflow: true,
      timedOut: false,
    });
  });

  it('caps the address space of the child when asked (util-linux prlimit)', async () => {
    expect(findPrlimit()).not.toBeNull();
    const { stdout } = await runProcess('sh', ['-c', 'ulimit -v'], { maxAddressSpaceBytes: 512 * 1024 ** 2 });
    expect(stdout.trim()).toBe(String(512 * 1024));
  });

  it('still rejects a missing binary with its errno code under the limit', async () => {
    await expect(
      runProcess('/nonexistent/hark-binary', [], { maxAddressSpaceBytes: 512 * 1024 ** 2 }),
    ).rejects.toMatchObject({ name: 'ProcessError', spawnErrorCode: 'ENOENT', exitCode: null });
  });

  it('the child dies with the process that started it: a SIGKILLed worker leaves no engine running', async () => {
    // The runner bundled for a plain node process, which starts a long child and is then killed.
    const dir = mkdtempSync(path.join(tmpdir(), 'hark-runner-'));
    try {
      const bundle = path.join(dir, 'runner.js');
      buildSync({
        entryPoints: [path.resolve(__dirname, '../src/process-runner.ts')],
        bundle: true,
        platform: 'node',
        format: 'cjs',
        outfile: bundle,
        logLevel: 'silent',
      });
      for (const options of ['{}', '{ maxAddressSpaceBytes: 2 ** 31 }']) {
        const parent = spawn(
          process.execPath,
          [
            '-e',
            `require(${JSON.stringify(bundle)}).runProcess('sleep', ['30'], { ...${options}, onSpawn: (pid) => console.log(pid) }).catch(() => {})`,
          ],
          { stdio: ['ignore', 'pipe', 'inherit'] },
        );
        const pid = await new Promise<number>((resolve) =>
          parent.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
        );
        expect(isAlive(pid)).toBe(true);
        parent.kill('SIGKILL');
        const deadline = Date.now() + 5000;
        while (isAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        const orphan = isAlive(pid);
        if (orphan) process.kill(pid, 'SIGKILL');
        expect(orphan).toBe(false);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('kills a process that overruns its time-out', async () => {
    await expect(runProcess('sleep', ['30'], { timeoutMs: 100 })).rejects.toMatchObject({ timedOut: true });
  });

  it('SIGKILLs the child on abort and rejects only once it is gone', async () => {
    const controller = new AbortController();
    let pid = 0;
    const running = runProcess('sleep', ['30'], { signal: controller.signal, onSpawn: (p) => (pid = p) });
    await new Promise((r) => setTimeout(r, 100));
    expect(isAlive(pid)).toBe(true);
    const abortedAt = Date.now();
    controller.abort();
    const error = await running.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MediaAbortError);
    expect(isAbortError(error)).toBe(true);
    expect(Date.now() - abortedAt).toBeLessThan(500);
    expect(isAlive(pid)).toBe(false);
  });

  it('does not start anything when the signal is already aborted', async () => {
    const spawned: number[] = [];
    const error = await runProcess('sleep', ['30'], {
      signal: AbortSignal.abort(),
      onSpawn: (p) => spawned.push(p),
    }).catch((e: unknown) => e);
    expect(isAbortError(error)).toBe(true);
    expect(spawned).toEqual([]);
  });
});
