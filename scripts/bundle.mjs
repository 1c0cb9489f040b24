// Bundles one entry point into a single CommonJS file for `node`.
// Workspace packages (@hark/*) export TypeScript source, so they are bundled in;
// every other bare import stays external and resolves from node_modules at run time.
import { build } from 'esbuild';

const [entry, outfile] = process.argv.slice(2);
if (!entry || !outfile) {
  console.error('usage: node scripts/bundle.mjs <entry.ts> <outfile.js>');
  process.exit(2);
}

const externalDeps = {
  name: 'external-deps',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('@hark/')) return undefined;
      return { path: args.path, external: true };
    });
  },
};

await build({
  entryPoints: [entry],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node20',
  // Workspace packages that publish a built dist/ (@hark/sdk) export their source under
  // `@hark/source`; `module` is esbuild's default condition, kept.
  conditions: ['@hark/source', 'module'],
  format: 'cjs',
  sourcemap: true,
  plugins: [externalDeps],
  logLevel: 'warning',
});
