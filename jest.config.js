// Two projects: `unit` (*.spec.ts next to the code, fakes through constructors) and
// `integration` (test/**/*.test.ts against real Postgres, Redis, ffmpeg and whisper.cpp).
const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  },
];
// ESM-only packages in node_modules that must be transformed to CommonJS for jest.
const esmDeps = ['got', '@sindresorhus', '@szmarczak', 'cacheable-lookup', 'cacheable-request', 'decompress-response',
  'form-data-encoder', 'lowercase-keys', 'mimic-response', 'normalize-url', 'p-cancelable', 'responselike',
  'http2-wrapper', 'keyv', 'type-fest', 'byte-counter', 'chunk-data', 'is-network-error', 'uint8array-extras'];
const common = {
  transform: { '^.+\\.(t|j|mj)sx?$': swc },
  transformIgnorePatterns: [`/node_modules/(?!(\\.pnpm/)?(${esmDeps.join('|')}))`],
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json'],
};
module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/{apps,packages,bench}/*/src/**/*.spec.ts', '<rootDir>/bench/**/*.spec.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/{apps,packages}/*/test/**/*.test.ts'],
      setupFiles: ['<rootDir>/packages/testing/src/jest-env.ts'],
      testTimeout: 60000,
    },
  ],
};
