// The fault suite's own Postgres cluster, which faults/run.sh starts and describes in
// FAULTS_PG_BIN, FAULTS_PG_DATA, FAULTS_PG_OPTS (and FAULTS_PG_RUNUSER when run as root). A
// scenario stops it hard (`-m immediate`: no shutdown checkpoint, like a crash) and starts it again.
import { spawn } from 'node:child_process';
import path from 'node:path';

export interface FaultPostgres {
  /** Whether this run owns a cluster it may stop (not so with HARK_EXTERNAL_DATABASE_URL). */
  available: boolean;
  /** `pg_ctl stop -m immediate -w`. */
  crash(): Promise<void>;
  /** `pg_ctl start -w -t 60` with the options run.sh started it with. */
  start(): Promise<void>;
}

export function faultPostgres(env: NodeJS.ProcessEnv = process.env): FaultPostgres {
  const bin = env.FAULTS_PG_BIN;
  const data = env.FAULTS_PG_DATA;
  const opts = env.FAULTS_PG_OPTS;
  const runUser = env.FAULTS_PG_RUNUSER;
  const pgCtl = (...args: string[]): Promise<void> => {
    const cmd = path.join(bin ?? '', 'pg_ctl');
    const [file, argv] = runUser ? ['runuser', ['-u', runUser, '--', cmd, ...args]] : [cmd, args];
    return new Promise((resolve, reject) => {
      const c = spawn(file, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      c.stderr.on('data', (b: Buffer) => (err += b.toString()));
      c.on('error', reject);
      c.on('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`pg_ctl ${args[0]}: ${code} ${err.trim()}`)),
      );
    });
  };
  return {
    available: Boolean(bin && data && opts),
    crash: () => pgCtl('stop', '-D', data!, '-m', 'immediate', '-w'),
    start: () =>
      pgCtl('start', '-D', data!, '-w', '-t', '60', '-l', path.join(data!, 'server.log'), '-o', opts!),
  };
}
