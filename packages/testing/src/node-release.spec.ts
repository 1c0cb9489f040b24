import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { REQUIRED_NODE_VERSION } from '@hark/core';
import { REPO_ROOT } from './processes';

// Hark runs on one Node release (packages/core/src/node-runtime.ts, which the processes check at
// start-up); every other place that names it must name the same one.
const MAJOR = REQUIRED_NODE_VERSION.split('.')[0]!;
const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');
const json = (file: string) => JSON.parse(read(file)) as Record<string, unknown>;
/** `NAME=value` at the start of a line of scripts/lib.sh. */
const libVar = (name: string) => new RegExp(`^${name}=(\\S+)$`, 'm').exec(read('scripts/lib.sh'))?.[1];

// The workspace (pnpm-workspace.yaml: apps/*, packages/*, bench/*, faults) and its root.
const manifests = [
  'package.json',
  'faults/package.json',
  ...['apps', 'packages', 'bench'].flatMap((dir) =>
    readdirSync(path.join(REPO_ROOT, dir)).map((name) => `${dir}/${name}/package.json`),
  ),
];
const dockerfiles = readdirSync(path.join(REPO_ROOT, 'docker')).filter((f) => f.endsWith('.Dockerfile'));

it.each(manifests.filter((m) => m !== 'packages/sdk/package.json'))('%s requires it (engines)', (file) => {
  expect(json(file).engines).toEqual({ node: `>=${REQUIRED_NODE_VERSION}` });
});

it("the SDK, which runs in users' programs, requires the oldest LTS line still maintained", () => {
  expect(json('packages/sdk/package.json').engines).toEqual({ node: '>=22' });
});

it('scripts/lib.sh installs it where the machine has an older Node', () => {
  expect(libVar('HARK_NODE_VERSION')).toBe(REQUIRED_NODE_VERSION);
});

it.each(dockerfiles)('docker/%s is built on it, with the corepack the scripts install', (file) => {
  const text = read(`docker/${file}`);
  expect(/^ARG NODE_IMAGE=(\S+)$/m.exec(text)?.[1]).toBe(`node:${REQUIRED_NODE_VERSION}-bookworm-slim`);
  expect(/npm install -g corepack@(\S+)/.exec(text)?.[1]).toBe(libVar('COREPACK_VERSION'));
});

it.each(['scripts/bundle.mjs', 'scripts/openapi.mjs'])('%s (esbuild) targets its line', (file) => {
  expect(/\btarget: '(node\d+)'/.exec(read(file))?.[1]).toBe(`node${MAJOR}`);
});

it("the code is typed against its line's API", () => {
  const types = (json('package.json').devDependencies as Record<string, string>)['@types/node'];
  expect(types?.split('.')[0]).toBe(MAJOR);
});
