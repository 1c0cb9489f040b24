// The load generator: wrk (C, a few percent of a core at these rates, so it takes little from the
// server it measures on a small machine), driven through wrk-report.lua, which adds the bearer key
// from the environment and prints one machine-readable line.
import { spawn } from 'node:child_process';
import path from 'node:path';

export interface LoadOptions {
  url: string;
  connections: number;
  threads: number;
  durationSeconds: number;
  /** Sent as `Authorization: Bearer <key>` (through the environment, never the command line). */
  /** A file with one API key per line; requests rotate through them. */
  apiKeysFile?: string;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Responses other than 2xx/3xx, plus connect/read/write errors and time-outs. */
  errors: number;
}

const MARK = 'WRK_RESULT ';

/** Reads the line wrk-report.lua prints; throws when it is missing. */
export function parseWrkOutput(stdout: string): LoadResult {
  const line = stdout.split('\n').find((l) => l.startsWith(MARK));
  if (!line) throw new Error(`wrk printed no result line:\n${stdout}`);
  const r = JSON.parse(line.slice(MARK.length)) as {
    requests: number;
    durationUs: number;
    p50Us: number;
    p90Us: number;
    p99Us: number;
    maxUs: number;
    errors: Record<string, number>;
  };
  const seconds = r.durationUs / 1e6;
  return {
    requests: r.requests,
    seconds,
    rps: seconds > 0 ? r.requests / seconds : 0,
    p50Ms: r.p50Us / 1000,
    p90Ms: r.p90Us / 1000,
    p99Ms: r.p99Us / 1000,
    maxMs: r.maxUs / 1000,
    errors: Object.values(r.errors).reduce((a, b) => a + b, 0),
  };
}

export function runWrk(opts: LoadOptions): Promise<LoadResult> {
  const script = path.resolve(__dirname, '../wrk-report.lua');
  const args = [
    `-t${opts.threads}`,
    `-c${opts.connections}`,
    `-d${opts.durationSeconds}s`,
    '--timeout',
    '10s',
    '-s',
    script,
    opts.url,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, {
      env: { ...process.env, BENCH_API_KEYS_FILE: opts.apiKeysFile ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) =>
      reject(new Error(`cannot run wrk (${e.message}); install it: apt-get install wrk`)),
    );
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`wrk exited ${code}: ${err || out}`));
      try {
        resolve(parseWrkOutput(out));
      } catch (e) {
        reject(e as Error);
      }
    });
  });
}
