// `pnpm openapi`: writes docs/openapi.json from the API's schemas (apps/api/src/openapi/document.ts),
// and the SDK's response types generated from it (packages/sdk/scripts/generate-types.ts).
// `--check` writes nothing and exits 1 when a committed file is stale.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// Workspace packages export TypeScript source: bundle them in, leave node_modules external.
async function load(entry) {
  const result = await build({
    entryPoints: [path.join(root, entry)],
    bundle: true,
    write: false,
    platform: 'node',
    target: 'node26',
    // Workspace packages that publish a built dist/ (@hark/sdk) export their source under
    // `@hark/source`; `module` is esbuild's default condition, kept.
    conditions: ['@hark/source', 'module'],
    format: 'cjs',
    logLevel: 'warning',
    plugins: [
      {
        name: 'external-deps',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (args) =>
            args.path.startsWith('@hark/') ? undefined : { path: args.path, external: true },
          );
        },
      },
    ],
  });
  const mod = { exports: {} };
  const requireFromEntry = createRequire(path.join(root, entry));
  new Function('module', 'exports', 'require', result.outputFiles[0].text)(
    mod,
    mod.exports,
    requireFromEntry,
  );
  return mod.exports;
}

const documentText = (await load('apps/api/src/openapi/document.ts')).serializeOpenApiDocument();
const sdk = await load('packages/sdk/scripts/generate-types.ts');
const outputs = [
  { target: 'docs/openapi.json', text: documentText },
  { target: sdk.API_TYPES_PATH, text: sdk.generateApiTypes(JSON.parse(documentText)) },
];

if (process.argv.includes('--check')) {
  let stale = false;
  for (const { target, text } of outputs) {
    let current = '';
    try {
      current = readFileSync(path.join(root, target), 'utf8');
    } catch {
      // missing counts as stale
    }
    if (current !== text) {
      console.error(`${target} is stale: run \`pnpm openapi\` and commit it`);
      stale = true;
    } else {
      console.log(`${target} is up to date`);
    }
  }
  if (stale) process.exit(1);
} else {
  for (const { target, text } of outputs) {
    const file = path.join(root, target);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, text);
    console.log(`wrote ${path.relative(process.cwd(), file)}`);
  }
}
