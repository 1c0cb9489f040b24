import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { REPO_ROOT } from '@hark/testing';
import { scratchFolders } from '@hark/testing/jest';
import { transform } from 'esbuild';
import { JFK, SDK_ROOT, sdkStack } from './stack';

// The README's SDK example is packages/sdk/examples/quickstart.ts, verbatim, and it runs: built,
// installed as a user would have it (node_modules/@hark/sdk -> the package's dist/), against the
// real service.
jest.setTimeout(180_000);

const EXAMPLE = path.join(SDK_ROOT, 'examples/quickstart.ts');
const BEGIN = '<!-- sdk-quickstart:begin';
const END = '<!-- sdk-quickstart:end -->';

/** The code block between the README's markers. */
function readmeBlock(readme: string): string {
  const start = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (start < 0 || end < start) throw new Error(`README.md has no ${BEGIN} ... ${END} block`);
  const block = readme.slice(readme.indexOf('\n', start) + 1, end);
  // Prettier keeps a blank line between the markers and the fence.
  const fenced = /^\n?```ts\n([\s\S]*)```\n\n?$/.exec(block);
  if (!fenced) throw new Error('the README block must be exactly one ```ts fence');
  return fenced[1]!;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

describe('README SDK example', () => {
  it('the README block is examples/quickstart.ts, character for character', () => {
    const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    expect(readmeBlock(readme)).toBe(readFileSync(EXAMPLE, 'utf8'));
  });

  it('the built package loads only node: built-ins and its own files', () => {
    const dist = path.join(SDK_ROOT, 'dist');
    expect(existsSync(path.join(dist, 'index.js'))).toBe(true);
    expect(existsSync(path.join(dist, 'index.d.ts'))).toBe(true);
    for (const f of readdirSync(dist).filter((x) => x.endsWith('.js'))) {
      const requires = [...readFileSync(path.join(dist, f), 'utf8').matchAll(/require\("([^"]+)"\)/g)].map(
        (m) => m[1]!,
      );
      for (const r of requires) expect([f, r]).toEqual([f, expect.stringMatching(/^(node:|\.\/)/)]);
    }
  });

  describe('against the running service', () => {
    const stack = sdkStack('sdk-quickstart');
    const scratch = scratchFolders();
    let project: string;
    beforeAll(async () => {
      if (!existsSync(path.join(SDK_ROOT, 'dist/index.js')))
        throw new Error('packages/sdk/dist is missing: build first (pnpm -s turbo run build)');
      // A user's project: ESM, with @hark/sdk installed.
      project = await scratch('hark-quickstart-');
      await mkdir(path.join(project, 'node_modules/@hark'), { recursive: true });
      await symlink(SDK_ROOT, path.join(project, 'node_modules/@hark/sdk'), 'dir');
      await writeFile(path.join(project, 'package.json'), JSON.stringify({ type: 'module', private: true }));
      const { code } = await transform(await readFile(EXAMPLE, 'utf8'), {
        loader: 'ts',
        format: 'esm',
        target: 'node22',
      });
      await writeFile(path.join(project, 'quickstart.js'), code);
    });

    it('runs to the end: upload, transcript with webhook, wait, SRT, verified notice', async () => {
      const acct = await stack.account();
      const port = await freePort();
      const child = spawn(process.execPath, ['quickstart.js'], {
        cwd: project,
        env: {
          PATH: process.env.PATH ?? '',
          HARK_URL: stack.baseUrl,
          HARK_API_KEY: acct.apiKey,
          HARK_AUDIO: JFK,
          HARK_WEBHOOK_PORT: String(port),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect({ code, out }).toEqual({ code: 0, out: expect.any(String) });
      expect(out).toMatch(/^uploaded 0 of 352078 bytes$/m);
      expect(out).toMatch(/^uploaded 352078 of 352078 bytes$/m);
      expect(out).toMatch(/^transcript tr_\S+: processing$/m);
      expect(out).toMatch(/^done: 11 s of audio, [0-9.]+ cents$/m);
      expect(out).toMatch(/^webhook verified: tr_\S+ is done$/m);
    });
  });
});
