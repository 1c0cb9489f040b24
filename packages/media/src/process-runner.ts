import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { MediaAbortError } from './media-error';

const STDERR_TAIL_BYTES = 8 * 1024;

export interface RunOptions {
  /** Aborting SIGKILLs the child at once and rejects with `MediaAbortError`. */
  signal?: AbortSignal;
  /** Receives the shell-quoted command line (without the setpriv/prlimit wrappers) before the process starts. Default: none. */
  debug?: (commandLine: string) => void;
  /** Keep stdout and return it; when false it is discarded. Default: true. */
  captureStdout?: boolean;
  /** Stdout beyond this kills the process and rejects. Default: 32 MiB. */
  maxStdoutBytes?: number;
  /** Kill the process (SIGKILL) and reject after this many ms. Default: no limit. */
  timeoutMs?: number;
  /** Receives the child's pid once it has started (logs, tests). Default: none. */
  onSpawn?: (pid: number) => void;
  /** Variables added to this process's environment for the child. Default: none. */
  env?: Readonly<Record<string, string>>;
  /**
   * The child's address-space limit (RLIMIT_AS), so an input cannot make it take the host's
   * memory: past it an allocation fails inside the child (ffmpeg: "Cannot allocate memory"),
   * where the OOM killer would otherwise pick a victim. Set with util-linux `prlimit`, which
   * applies it and execs the command (same pid); where `prlimit` is not installed the child runs
   * without it. Default: none.
   */
  maxAddressSpaceBytes?: number;
}

export interface RunResult {
  stdout: string;
  /** Last ~8 KB of stderr. */
  stderr: string;
  durationMs: number;
}

/** The signature media functions take, so tests can pass a fake instead of spawning. */
export type RunProcess = (
  command: string,
  args: readonly string[],
  options?: RunOptions,
) => Promise<RunResult>;

export interface ProcessErrorDetails {
  command: string;
  /** Null when the process did not exit by itself (never started, or killed by a signal). */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Last ~8 KB of stderr. */
  stderr: string;
  /** errno code when spawning failed (`ENOENT`: binary not found). */
  spawnErrorCode?: string | null;
  /** Killed for overrunning `timeoutMs`. */
  timedOut?: boolean;
  /** Killed for writing more than `maxStdoutBytes`: the output, not the machine, was the trouble. */
  stdoutOverflow?: boolean;
}

/** The process could not start, exited non-zero, was killed by a signal, or overran a limit. */
export class ProcessError extends Error {
  override readonly name = 'ProcessError';
  readonly command: string;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
  readonly spawnErrorCode: string | null;
  readonly timedOut: boolean;
  readonly stdoutOverflow: boolean;

  constructor(message: string, details: ProcessErrorDetails) {
    super(message);
    this.command = details.command;
    this.exitCode = details.exitCode;
    this.signal = details.signal;
    this.stderr = details.stderr;
    this.spawnErrorCode = details.spawnErrorCode ?? null;
    this.timedOut = details.timedOut ?? false;
    this.stdoutOverflow = details.stdoutOverflow ?? false;
  }
}

export function formatCommandLine(command: string, args: readonly string[]): string {
  const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  return [command, ...args].map(quote).join(' ');
}

/**
 * The stderr line worth putting in an error message (the whole tail stays attached): the last
 * one that mentions an error, since tools print usage or timings after it; else the last line.
 */
export function stderrSummary(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.findLast((l) => /\berror\b/i.test(l)) ?? lines[lines.length - 1] ?? '';
}

const toolPaths = new Map<string, string | null>();

/** An executable `name` on PATH (looked up once per name), or null. */
export function findOnPath(name: string): string | null {
  if (toolPaths.has(name)) return toolPaths.get(name)!;
  let found: string | null = null;
  for (const dir of (process.env['PATH'] ?? '').split(delimiter).filter(Boolean)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      found = join(dir, name);
      break;
    } catch {
      // not in this folder
    }
  }
  toolPaths.set(name, found);
  return found;
}

let setprivChecked: string | null | undefined;

/**
 * util-linux `setpriv` on PATH when it takes `--pdeathsig` (util-linux 2.33 and later; an older
 * one would make every spawn fail), tried once; else null.
 */
function pdeathsigSetpriv(): string | null {
  if (setprivChecked !== undefined) return setprivChecked;
  const setpriv = findOnPath('setpriv');
  setprivChecked =
    setpriv !== null &&
    spawnSync(setpriv, ['--pdeathsig', 'KILL', '--', 'true'], { stdio: 'ignore' }).status === 0
      ? setpriv
      : null;
  return setprivChecked;
}

/** util-linux `prlimit` on PATH (looked up once), or null. */
export function findPrlimit(): string | null {
  return findOnPath('prlimit');
}

/**
 * What to spawn for `command`. Each wrapper execs the next (same pid): util-linux `setpriv
 * --pdeathsig KILL`, so the child is killed when this process dies, even by SIGKILL (a worker
 * killed mid-job left its whisper-cli running for the rest of the file while the job ran again
 * elsewhere), and `prlimit --as=N` to cap its address space. A wrapper that is not installed
 * is left out.
 */
function wrapped(command: string, args: readonly string[], maxAddressSpaceBytes: number | undefined) {
  const line: string[] = [];
  const setpriv = pdeathsigSetpriv();
  if (setpriv !== null) line.push(setpriv, '--pdeathsig', 'KILL', '--');
  const prlimit = maxAddressSpaceBytes === undefined ? null : findPrlimit();
  if (prlimit !== null) line.push(prlimit, `--as=${Math.floor(maxAddressSpaceBytes as number)}`, '--');
  if (line.length === 0) return { file: command, argv: [...args] };
  return { file: line[0]!, argv: [...line.slice(1), command, ...args] };
}

/**
 * The one place in the code base that spawns processes: no shell, stderr tail kept, killable.
 * Rejects with `MediaAbortError` when aborted, `ProcessError` for every other failure.
 */
export const runProcess: RunProcess = (command, args, options = {}) => {
  const {
    signal,
    debug,
    captureStdout = true,
    maxStdoutBytes = 32 * 1024 * 1024,
    timeoutMs,
    onSpawn,
  } = options;
  if (signal?.aborted) return Promise.reject(new MediaAbortError(undefined, signal.reason));
  const { file, argv } = wrapped(command, args, options.maxAddressSpaceBytes);
  debug?.(formatCommandLine(command, args)); // the command asked for, without the wrappers

  return new Promise<RunResult>((resolve, reject) => {
    const started = Date.now();
    const child = spawn(file, argv, {
      stdio: ['ignore', captureStdout ? 'pipe' : 'ignore', 'pipe'],
      ...(options.env ? { env: { ...process.env, ...options.env } } : {}),
    });
    const stdoutChunks: Buffer[] = [];
    let stdoutBytes = 0;
    let stderrTail = Buffer.alloc(0);
    // Set when we kill the child ourselves; the rejection is sent once it has really exited,
    // so a caller that sees the rejection never sees the process still alive.
    let killedFor: Error | null = null;
    let settled = false;

    const stderrText = () => stderrTail.toString('utf8');
    const finish = (error: Error | null) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (timer) clearTimeout(timer);
      if (error) reject(error);
      else
        resolve({
          stdout: Buffer.concat(stdoutChunks).toString('utf8'),
          stderr: stderrText(),
          durationMs: Date.now() - started,
        });
    };
    const kill = (reason: Error) => {
      if (killedFor) return;
      killedFor = reason;
      child.kill('SIGKILL');
    };
    const onAbort = () => kill(new MediaAbortError(undefined, signal?.reason));
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer =
      timeoutMs === undefined
        ? null
        : setTimeout(() => {
            const killed = { command, exitCode: null, signal: 'SIGKILL' as const, stderr: stderrText() };
            kill(
              new ProcessError(`${command} timed out after ${timeoutMs} ms`, { ...killed, timedOut: true }),
            );
          }, timeoutMs);

    child.on('spawn', () => {
      if (child.pid !== undefined) onSpawn?.(child.pid);
    });
    child.stdout?.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxStdoutBytes) {
        const message = `${command} wrote more than ${maxStdoutBytes} bytes to stdout`;
        const killed = { command, exitCode: null, signal: 'SIGKILL' as const, stderr: stderrText() };
        kill(new ProcessError(message, { ...killed, stdoutOverflow: true }));
      } else {
        stdoutChunks.push(chunk);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      const joined = Buffer.concat([stderrTail, chunk]);
      stderrTail =
        joined.length > STDERR_TAIL_BYTES ? joined.subarray(joined.length - STDERR_TAIL_BYTES) : joined;
    });

    child.on('error', (err: NodeJS.ErrnoException) => {
      // 'error' without a pid: it never started (ENOENT, EACCES). With one, a kill failed; 'exit' follows.
      if (child.pid !== undefined) return;
      const details = { command, exitCode: null, signal: null, stderr: '', spawnErrorCode: err.code ?? null };
      finish(new ProcessError(`${command} could not start: ${err.message}`, details));
    });
    // 'exit' rather than 'close' for our own kills: 'close' also waits for pipes that an
    // inheriting grandchild could hold open.
    child.on('exit', () => {
      if (killedFor) finish(killedFor);
    });
    child.on('close', (code, sig) => {
      if (killedFor) return finish(killedFor);
      if (code === 0) return finish(null);
      // A wrapper could not exec the command: the same failure as spawning it directly.
      const execFailed =
        file !== command && /^(?:prlimit|setpriv): failed to execute .*: (.*)$/m.exec(stderrText());
      if (execFailed && (code === 126 || code === 127)) {
        const errno = code === 127 ? 'ENOENT' : 'EACCES';
        const details = { command, exitCode: null, signal: null, stderr: '', spawnErrorCode: errno };
        return finish(new ProcessError(`${command} could not start: ${execFailed[1]}`, details));
      }
      const how = code === null ? `was killed by ${sig}` : `exited with code ${code}`;
      const line = stderrSummary(stderrText());
      const details = { command, exitCode: code, signal: sig, stderr: stderrText() };
      finish(new ProcessError(`${command} ${how}${line ? `: ${line}` : ''}`, details));
    });
  });
};
