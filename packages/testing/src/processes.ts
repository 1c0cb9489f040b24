import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

export const REPO_ROOT = path.resolve(__dirname, '../../..');

export interface AppProcess {
  child: ChildProcess;
  /** JSON log lines printed so far. */
  logs: Record<string, unknown>[];
  /** Resolves with the first log line matching `msg`. */
  waitForLog(msg: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
  kill(signal?: NodeJS.Signals): void;
}

export type AppName = 'api' | 'worker' | 'webhook-dispatcher';

/** The Node flags an app runs with in production (its package.json "nodeFlags"). */
export function appNodeFlags(name: AppName): string[] {
  const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'apps', name, 'package.json'), 'utf8')) as {
    nodeFlags?: string[];
  };
  return manifest.nodeFlags ?? [];
}

/**
 * Starts a built app (`apps/<name>/dist/main.js`, or `opts.main`: another build of it, such as a
 * bench's baseline) as a real process, with the Node flags it runs with in production, and its
 * JSON logs captured.
 */
export function startApp(name: AppName, env: NodeJS.ProcessEnv, opts: { main?: string } = {}): AppProcess {
  const child = spawn(
    process.execPath,
    [...appNodeFlags(name), opts.main ?? path.join(REPO_ROOT, 'apps', name, 'dist/main.js')],
    {
      env: { ...process.env, LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const logs: Record<string, unknown>[] = [];
  const waiters: { msg: string; resolve: (l: Record<string, unknown>) => void }[] = [];
  let buf = '';
  const onData = (chunk: Buffer) => {
    buf += chunk.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        parsed = { msg: line };
      }
      logs.push(parsed);
      for (const w of waiters.filter((x) => x.msg === parsed.msg)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(parsed);
      }
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<number | string>((resolve) =>
    child.on('exit', (code, sig) => resolve(code ?? sig ?? -1)),
  );
  return {
    child,
    logs,
    exited,
    kill: (signal = 'SIGKILL') => child.kill(signal),
    waitForLog(msg, timeoutMs = 15_000) {
      const found = logs.find((l) => l.msg === msg);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const t = setTimeout(
          () =>
            reject(
              new Error(
                `${name} did not log "${msg}" within ${timeoutMs} ms; logs: ${JSON.stringify(logs.slice(-5))}`,
              ),
            ),
          timeoutMs,
        );
        waiters.push({ msg, resolve: (l) => (clearTimeout(t), resolve(l)) });
        void exited.then((code) =>
          reject(
            new Error(`${name} exited (${code}) before logging "${msg}": ${JSON.stringify(logs.slice(-5))}`),
          ),
        );
      });
    },
  };
}

/** A built API process that has logged "api listening". */
export interface RunningApi {
  proc: AppProcess;
  /** The "api listening" log line (port, storage, upload hasher). */
  listening: Record<string, unknown>;
  port: number;
  /** `http://127.0.0.1:<port>/v1` */
  base: string;
  /**
   * One request to `base` + `p`: a Buffer body is sent as is, another body as JSON; the answer's
   * status, headers and JSON body.
   */
  call<T = Record<string, unknown>>(
    method: string,
    p: string,
    auth: Record<string, string>,
    body?: Buffer | object,
  ): Promise<{ status: number; headers: Headers; body: { data: T } }>;
}

/**
 * Starts the built API (`startApp`) and waits for it to listen (`readyMs`, default 15 s);
 * `started` is given the process at once.
 */
export async function startApiProcess(
  env: NodeJS.ProcessEnv,
  opts: { started?: (p: AppProcess) => void; readyMs?: number } = {},
): Promise<RunningApi> {
  const proc = startApp('api', env);
  opts.started?.(proc);
  const listening = await proc.waitForLog('api listening', opts.readyMs);
  const port = listening.port as number;
  const base = `http://127.0.0.1:${port}/v1`;
  return {
    proc,
    listening,
    port,
    base,
    async call<T>(method: string, p: string, auth: Record<string, string>, body?: Buffer | object) {
      const json = body !== undefined && !Buffer.isBuffer(body);
      const res = await fetch(`${base}${p}`, {
        method,
        headers: { ...auth, ...(json ? { 'Content-Type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: json ? JSON.stringify(body) : body } : {}),
      });
      return { status: res.status, headers: res.headers, body: (await res.json()) as { data: T } };
    },
  };
}

/** Pids of live whisper-cli processes whose command line mentions `marker` (from /proc). */
export function whisperPids(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // A zombie (state Z) has exited already.
      if (cmdline.includes('whisper-cli') && cmdline.includes(marker) && !/^\d+ \(.*\) Z/.test(stat))
        pids.push(Number(entry));
    } catch {
      // exited while we looked
    }
  }
  return pids;
}
