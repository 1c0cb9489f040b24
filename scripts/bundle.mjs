// Bundles one entry point into a single CommonJS file for `node`.
// Workspace packages (@hark/*) export TypeScript source, so they are bundled in;
// every other bare import stays external and resolves from node_modules at run time, next to the
// bundle: so the package that owns the bundle must declare it (pnpm hoists nothing to the root),
// and the build fails when it does not.
import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { build } from 'esbuild';

const [entry, outfile] = process.argv.slice(2);
if (!entry || !outfile) {
  console.error('usage: node scripts/bundle.mjs <entry.ts> <outfile.js>');
  process.exit(2);
}

/** Whether `name` is installed where node will look for it from the bundle's folder. */
function installedFor(name, dir) {
  for (let d = dir; ; d = path.dirname(d)) {
    if (existsSync(path.join(d, 'node_modules', name, 'package.json'))) return true;
    if (path.dirname(d) === d) return false;
  }
}

const undeclared = new Map();
const externalDeps = {
  name: 'external-deps',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@hark/')) return undefined;
      const parts = args.path.split('/');
      const name = args.path.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
      if (!name.startsWith('node:') && !builtinModules.includes(name)) {
        if (!installedFor(name, path.dirname(path.resolve(outfile)))) {
          undeclared.set(name, `imported by ${path.relative(process.cwd(), args.importer)}`);
        }
      }
      return { path: args.path, external: true };
    });
  },
};

await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  // The Node line Hark runs on (packages/core/src/node-runtime.ts).
  target: 'node26',
  // Workspace packages that publish a built dist/ (@hark/sdk) export their source under
  // `@hark/source`; `module` is esbuild's default condition, kept.
  conditions: ['@hark/source', 'module'],
  format: 'cjs',
  sourcemap: true,
  plugins: [externalDeps],
  logLevel: 'warning',
});

// `require.resolve('x')` is left as written and runs from the bundle too.
for (const m of readFileSync(outfile, 'utf8').matchAll(/require\.resolve\(\s*["']([^"'.][^"']*)["']/g)) {
  const parts = m[1].split('/');
  const name = m[1].startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  if (!installedFor(name, path.dirname(path.resolve(outfile))))
    undeclared.set(name, `require.resolve in ${outfile}`);
}

if (undeclared.size > 0) {
  for (const [name, importer] of undeclared) {
    console.error(`${outfile}: ${name} (${importer}) is not a dependency of the bundle's package`);
  }
  process.exit(1);
}
