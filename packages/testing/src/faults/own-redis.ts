// A private redis-server on a free port (`--save ''`, no persistence, a temp dir) that a fault
// scenario may flush, shut down and start again; nobody else uses it.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { waitFor } from '../wait-for';

/** A port nothing listens on right now (also a dead address for "unreachable" URLs). */
export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export class OwnRedis {
  private port = 0;
  private dir = '';
  private proc: ChildProcess | undefined;

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Runs `redis-cli` against this server; resolves with its trimmed output. */
  cli(...args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const c = spawn('redis-cli', ['-p', String(this.port), ...args]);
      let out = '';
      c.stdout.on('data', (d: Buffer) => (out += d.toString()));
      c.on('exit', (code) =>
        code === 0 ? resolve(out.trim()) : reject(new Error(`redis-cli ${args.join(' ')} exited ${code}`)),
      );
    });
  }

  /** Starts the server (again, on the same port and folder after `stop`). */
  async start(): Promise<void> {
    if (!this.port) this.port = await freePort();
    if (!this.dir) this.dir = await mkdtemp(path.join(tmpdir(), 'hark-faults-redis-'));
    this.proc = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        this.dir,
        '--maxmemory-policy',
        'noeviction',
      ],
      { stdio: 'ignore' },
    );
    await waitFor(async () => (await this.cli('ping')) === 'PONG', {
      timeout: 10_000,
      message: 'own redis-server',
    });
  }

  /** `SHUTDOWN NOSAVE` (SIGKILL if that fails); resolves once the process has exited. */
  async stop(): Promise<void> {
    const p = this.proc;
    if (!p) return;
    const exited = new Promise((r) => p.on('exit', r));
    await this.cli('shutdown', 'nosave').catch(() => p.kill('SIGKILL'));
    await exited;
    this.proc = undefined;
  }

  /** Stops the server and removes its folder. */
  async dispose(): Promise<void> {
    await this.stop();
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}
