import { spawnSync } from 'node:child_process';
import path from 'node:path';

// The try page's check of a pasted key (public/api.js, a browser ES module) run by Node, as in
// try-page-upload.spec.ts.
function problems(keys: string[]): (string | null)[] {
  const script = `
    const { keyProblem } = await import(${JSON.stringify(path.join(__dirname, '../public/api.js'))});
    console.log(JSON.stringify(JSON.parse(process.argv[1]).map(keyProblem)));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(keys)], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout) as (string | null)[];
}

describe('try page: the key field', () => {
  it('accepts keys of the issued form: tk_ and 32 or more URL-safe characters', () => {
    expect(
      problems([
        `tk_${'A'.repeat(43)}`,
        `tk_${'a0_-'.repeat(8)}`,
        'tk_not-a-real-key-0123456789abcdefghij', // the page test's wrong key: the API must refuse it
      ]),
    ).toEqual([null, null, null]);
  });

  it('refuses, without echoing it, a key that cannot be one (U+2026 made fetch throw "not reached")', () => {
    const bad = [
      `tk_AbCdEfGh\u2026${'x'.repeat(32)}`, // a shortened display copy: not even sendable in a header
      `tk_${'x'.repeat(31)}`,
      `${'x'.repeat(40)}`,
      `tk_${'x'.repeat(32)} extra`,
      `sk_${'x'.repeat(40)}`,
    ];
    const found = problems(bad);
    for (const [i, message] of found.entries()) {
      expect(message).toMatch(/tk_/);
      expect(message).not.toContain(bad[i]!.slice(3, 11));
    }
  });
});
