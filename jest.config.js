// Two projects: `unit` (*.spec.ts next to the code, fakes through constructors) and
// `integration` (test/**/*.test.ts against real Postgres, Redis, ffmpeg and whisper.cpp).
// A third, `faults` (faults/scenarios/*.fault.ts: the fault-injection suite, real app processes on
// its own Postgres cluster and Redis), is listed only when HARK_FAULTS_SUITE=1, which
// faults/run.sh sets after preparing them; plain `jest` never picks it up.
const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  },
];
// ESM-only packages in node_modules (got and its dependencies) must be transformed to CommonJS
// for jest: find every installed package declaring "type": "module".
const fs = require('node:fs');
const path = require('node:path');
function esmPackages() {
  const store = path.join(__dirname, 'node_modules/.pnpm');
  const names = new Set();
  for (const entry of fs.existsSync(store) ? fs.readdirSync(store) : []) {
    const nm = path.join(store, entry, 'node_modules');
    const name = entry.startsWith('@')
      ? entry.split('@').slice(0, 2).join('@').replace('+', '/')
      : entry.split('@')[0];
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(nm, name, 'package.json'), 'utf8'));
      if (pkg.type === 'module') names.add(name);
    } catch {
      // not a package directory
    }
  }
  // In pnpm's store a scoped package's folder is `@scope+name@version`.
  return [...names].map((n) => n.replace(/[.+]/g, (c) => `\\${c}`).replace('/', '[/+]'));
}
const esmDeps = esmPackages();
const common = {
  transform: { '^.+\\.(t|j|mj)sx?$': swc },
  transformIgnorePatterns: [`/node_modules/(?!(\\.pnpm/)?(${esmDeps.join('|')}))`],
  testEnvironment: 'node',
  // `@hark/source`: workspace packages that publish a built dist/ (@hark/sdk) export their
  // TypeScript source under this condition, so tests run without building them first.
  testEnvironmentOptions: { customExportConditions: ['node', 'node-addons', '@hark/source'] },
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
};
module.exports = {
  testTimeout: 60000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/{apps,packages,bench}/*/src/**/*.spec.ts', '<rootDir>/bench/**/*.spec.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/{apps,packages}/*/test/**/*.test.ts'],
      setupFiles: ['<rootDir>/packages/testing/src/jest-env.ts'],
      setupFilesAfterEnv: ['<rootDir>/packages/testing/src/jest-contract.ts'],
      testTimeout: 60000,
    },
    ...(process.env.HARK_FAULTS_SUITE === '1'
      ? [
          {
            ...common,
            displayName: 'faults',
            testMatch: ['<rootDir>/faults/scenarios/*.fault.ts'],
            globalSetup: '<rootDir>/packages/testing/src/faults/global-setup.ts',
            globalTeardown: '<rootDir>/packages/testing/src/faults/global-teardown.ts',
          },
        ]
      : []),
  ],
};
