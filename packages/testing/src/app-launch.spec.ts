import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type AppName, REPO_ROOT, appNodeFlags } from './processes';

const APPS: [AppName, string[]][] = [
  ['api', ['api.Dockerfile']],
  ['worker', ['worker.Dockerfile', 'worker.cuda.Dockerfile']],
  ['webhook-dispatcher', ['webhook-dispatcher.Dockerfile']],
];

// Tests, benches and scripts/up.sh start apps with package.json "nodeFlags" (startApp,
// appNodeFlags); the images and `pnpm start` must run them with the same flags.
describe.each(APPS)('%s is launched the same way everywhere', (app, dockerfiles) => {
  const flags = appNodeFlags(app);

  it.each(dockerfiles)('%s CMD', (file) => {
    const text = readFileSync(path.join(REPO_ROOT, 'docker', file), 'utf8');
    const cmd = /^CMD (\[.*\])$/m.exec(text)?.[1];
    expect(cmd && (JSON.parse(cmd) as string[])).toEqual(['node', ...flags, `apps/${app}/dist/main.js`]);
  });

  it('pnpm start', () => {
    const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'apps', app, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts.start).toBe(['node', ...flags, 'dist/main.js'].join(' '));
  });
});

it('the API keeps a small young generation (bench/uploads measures its peak RSS with it)', () => {
  expect(appNodeFlags('api')).toContain('--max-semi-space-size=4');
});
