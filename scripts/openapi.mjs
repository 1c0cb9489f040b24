// `pnpm openapi`: writes docs/openapi.json from the API's schemas (apps/api/src/openapi/document.ts).
// `--check` writes nothing and exits 1 when the committed document is stale.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const target = path.join(root, 'docs/openapi.json');

// Workspace packages export TypeScript source: bundle them in, leave node_modules external.
const result = await build({
  entryPoints: [path.join(root, 'apps/api/src/openapi/document.ts')],
  bundle: true,
  write: false,
  platform: 'node',
  target: 'node20',
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
const requireFromApi = createRequire(path.join(root, 'apps/api/src/openapi/document.ts'));
new Function('module', 'exports', 'require', result.outputFiles[0].text)(mod, mod.exports, requireFromApi);
const text = mod.exports.serializeOpenApiDocument();

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // missing counts as stale
  }
  if (current !== text) {
    console.error('docs/openapi.json is stale: run `pnpm openapi` and commit it');
    process.exit(1);
  }
  console.log('docs/openapi.json is up to date');
} else {
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, text);
  console.log(`wrote ${path.relative(process.cwd(), target)}`);
}
