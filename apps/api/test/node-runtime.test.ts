import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { unsupportedNodeReason } from '@hark/core';
import { REPO_ROOT, freePort, s3TestBucket, scrapeMetrics } from '@hark/testing';
import { type Stack, stackTest } from '@hark/testing/jest';

// Hark runs on one Node line (packages/core/src/node-runtime.ts). The test command runs on it
// (scripts/lib.sh puts the pinned release first on PATH where the machine's is older) and so do
// the processes it starts; each says which Node it runs in its metrics (prom-client's
// nodejs_version_info), and none prints a warning of Node's. On S3 storage, since the AWS SDK warns
// at start-up about the Node releases its next versions drop.

/** The `version` label of `nodejs_version_info` in a /metrics text. */
function nodeVersionIn(metrics: string): string | undefined {
  return /^nodejs_version_info\{[^}]*\bversion="([^"]+)"/m.exec(metrics)?.[1];
}

describe('the API, worker and dispatcher on S3 storage', () => {
  const ports = { worker: 0, dispatcher: 0 };
  const stack: Stack = stackTest({
    name: 'node-runtime',
    env: async () => {
      ports.worker = await freePort();
      ports.dispatcher = await freePort();
      return (await s3TestBucket()).env;
    },
    workerEnv: () => ({ HARK_METRICS_PORT: String(ports.worker), HARK_METRICS_HOST: '127.0.0.1' }),
    dispatcher: true,
    dispatcherEnv: () => ({ HARK_METRICS_PORT: String(ports.dispatcher), HARK_METRICS_HOST: '127.0.0.1' }),
  });

  it('run on the Node this test runs on, which is the required line', async () => {
    expect(unsupportedNodeReason(process.versions.node)).toBeNull();
    const versions = [
      nodeVersionIn(await scrapeMetrics(`http://127.0.0.1:${stack.api.port}`)),
      nodeVersionIn(await scrapeMetrics(`http://127.0.0.1:${ports.worker}`)),
      nodeVersionIn(await scrapeMetrics(`http://127.0.0.1:${ports.dispatcher}`)),
    ];
    expect(versions).toEqual([process.version, process.version, process.version]);
  });

  it('print no warning of Node (unsupported version, deprecation, experimental feature)', () => {
    expect(stack.api.listening.storage).toMatch(/^s3 /);
    const warnings = [stack.api.proc, stack.worker, stack.dispatcher]
      .flatMap((p) => p.logs)
      .map((l) => String(l.msg))
      .filter((msg) => /^\(node:\d+\) |Warning:/.test(msg));
    expect(warnings).toEqual([]);
  });
});

/**
 * An older Node to start the entry points on: the machine's own where it is older (Node 20 here
 * and on CI; scripts/lib.sh put the pinned release before it on PATH), which also proves the
 * bundles parse on it so that the check gets to run; else this Node made to report 20.20.2.
 */
async function olderNode(dir: string): Promise<{ argv: string[]; version: string }> {
  for (const d of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const bin = path.join(d, 'node');
    try {
      const version = execFileSync(bin, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
      if (unsupportedNodeReason(version)) return { argv: [bin], version };
    } catch {
      // no node in this folder, or one that does not run
    }
  }
  const preload = path.join(dir, 'node-20.cjs');
  await writeFile(preload, "Object.defineProperty(process.versions, 'node', { value: '20.20.2' });\n");
  return { argv: [process.execPath, '--require', preload], version: '20.20.2' };
}

describe('on an older Node', () => {
  let dir = '';
  let old: { argv: string[]; version: string } = { argv: [], version: '' };
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'hark-old-node-'));
    old = await olderNode(dir);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("is one Hark refuses (the machine's Node 20 here)", () => {
    expect(Number(old.version.split('.')[0])).toBeLessThan(26);
  });

  it.each([
    'apps/api/dist/main.js',
    'apps/worker/dist/main.js',
    'apps/webhook-dispatcher/dist/main.js',
    'packages/cli/dist/hark.js',
    'packages/db/dist/migrate-cli.js',
  ])('%s exits 1 at once, printing only the release it needs', async (entry) => {
    const [bin, ...args] = old.argv;
    const child = spawn(bin!, [...args, path.join(REPO_ROOT, entry)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect({ code, out }).toEqual({
      code: 1,
      out:
        `Hark needs Node.js 26.12.1 or later (the 26 LTS line); this is Node.js v${old.version}. ` +
        'scripts/up.sh installs Node.js 26.12.1 into .hark/node; the Docker images run it.\n',
    });
  });
});
