// Generates the Prisma client offline. Prisma's CLI wants a native schema engine at start even
// for `generate`, which never runs it; pointing it at any executable is enough
// (see ../shared/notes/prisma-offline.md).
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '../../..');
const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: process.env.PRISMA_SCHEMA_ENGINE_BINARY || '/bin/false',
  CHECKPOINT_DISABLE: '1',
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
};
const prismaBin = require.resolve('prisma/build/index.js', { paths: [__dirname] });
const r = spawnSync(
  process.execPath,
  [prismaBin, 'generate', '--schema', path.join(root, 'prisma/schema.prisma')],
  {
    env,
    stdio: 'inherit',
    cwd: root,
  },
);
process.exit(r.status ?? 1);
