// The API, worker and dispatcher processes one fault scenario runs (built apps/*/dist/main.js,
// through startApp): started and waited for, stopped on purpose, or found to have crashed.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type AppName, type AppProcess, startApp } from '../processes';
import { waitFor } from '../wait-for';

export type Env = Record<string, string>;

export class Fleet {
  private readonly started: AppProcess[] = [];
  /** Processes the scenario meant to end (signals it sent, or a worker made to crash on purpose). */
  private readonly meantToEnd = new WeakSet<AppProcess>();
  /** Apps that exited on their own (crashed). */
  readonly crashes: string[] = [];

  /** Starts an app without waiting for it; an exit nobody asked for is recorded in `crashes`. */
  app(name: AppName, env: Env): AppProcess {
    const p = startApp(name, env);
    this.started.push(p);
    void p.exited.then((code) => {
      if (!this.meantToEnd.has(p)) {
        const last = p.logs
          .filter((l) => typeof l.msg === 'string' && /Error|error|throw/.test(l.msg))
          .slice(0, 3);
        this.crashes.push(
          `${name} pid ${p.child.pid} exited on its own (${code}): ${last
            .map((l) => String(l.msg ?? l.err).trim())
            .join(' | ')
            .slice(0, 300)}`,
        );
      }
    });
    return p;
  }

  async api(env: Env): Promise<{ p: AppProcess; port: number }> {
    const p = this.app('api', env);
    const port = (await p.waitForLog('api listening', 20_000)).port as number;
    return { p, port };
  }

  async worker(env: Env): Promise<AppProcess> {
    const p = this.app('worker', env);
    await p.waitForLog('worker ready', 20_000);
    return p;
  }

  async dispatcher(env: Env): Promise<AppProcess> {
    const p = this.app('webhook-dispatcher', env);
    await p.waitForLog('dispatcher ready', 20_000);
    return p;
  }

  /** Marks `p` as ending on purpose (a crash by design is no crash). */
  expectExit(p: AppProcess): void {
    this.meantToEnd.add(p);
  }

  /** Signals `p` (unless it is gone already) and resolves with its exit code or signal. */
  stop(p: AppProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | string> {
    this.meantToEnd.add(p);
    if (p.child.exitCode === null && p.child.signalCode === null) p.kill(signal);
    return p.exited;
  }

  /** SIGKILLs every process started so far; resolves with them once all have exited. */
  async killAll(): Promise<AppProcess[]> {
    const procs = this.started.splice(0);
    await Promise.all(procs.map((p) => this.stop(p, 'SIGKILL')));
    return procs;
  }
}

/** Writes every process's JSON log lines to `<dir>/<file>`, one line each, tagged with the process. */
export function writeProcessLogs(procs: AppProcess[], dir: string, file: string): void {
  const lines = procs.flatMap((p, n) =>
    p.logs.map((l) => JSON.stringify({ proc: n, pid: p.child.pid, ...l })),
  );
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, file), lines.join('\n') + '\n');
}

/** The log line of `p` with this msg and transcriptId, polled. */
export function logFor(p: AppProcess, msg: string, id: string, timeout = 30_000) {
  return waitFor(() => p.logs.find((l) => l.msg === msg && l.transcriptId === id), {
    timeout,
    interval: 20,
    message: `${msg} ${id}`,
  });
}

/** Resolves once `p` has logged `msg` (any transcript). */
export function anyLog(p: AppProcess, msg: string, what: string, timeout = 30_000) {
  return waitFor(() => p.logs.some((l) => l.msg === msg), { timeout, message: what });
}

/** Pids of live processes whose command line mentions `marker` (orphaned engines of a killed worker). */
function pidsWith(marker: string): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8');
      if (cmd.includes(marker) && !cmd.includes('jest')) out.push(Number(e));
    } catch {
      // gone
    }
  }
  return out;
}

/** SIGKILLs every process whose command line mentions `marker`. */
export function killOrphans(marker: string): void {
  for (const pid of pidsWith(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}
