import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { createDb } from '@hark/db';

const run = promisify(execFile);
const BIN = path.resolve(__dirname, '../dist/hark.js');

async function hark(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [BIN, ...args], { env: process.env });
    return { code: 0, stdout, stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}

async function json<T = Record<string, unknown>>(...args: string[]): Promise<T> {
  const r = await hark('--json', ...args);
  expect(r).toMatchObject({ code: 0 });
  return JSON.parse(r.stdout) as T;
}

describe('hark operator CLI (built binary, real Postgres)', () => {
  it('money is printed exactly, never through a float (decisions: exact decimals)', async () => {
    const acct = await json<{ accountId: string }>(
      'account',
      'create',
      '--name',
      'cli-exact',
      '--trial-credits',
      '123456789012345.6789012345',
    );
    const top = await hark('--json', 'topup', acct.accountId, '999999999999999999.9999999999');
    expect(top.code).toBe(0);
    // JSON numerals with every digit (a float would print 1000123456789012400).
    expect(top.stdout).toContain('"total": 1000123456789012345.6789012344');
    expect(top.stdout).toContain('"reserved": 0,');
    expect(JSON.parse(top.stdout)).toMatchObject({ toppedUp: true });
    const human = await hark('balance', acct.accountId);
    expect(human.stdout).toContain('total: 1000123456789012345.6789012344');
    expect(human.stdout).toContain('available: 1000123456789012345.6789012344');
  });

  it('account, keys, top-up, grant, balance, usage', async () => {
    const acct = await json<{
      accountId: string;
      total: number;
      toppedUp: boolean;
      maxRunning: number | null;
    }>('account', 'create', '--name', 'cli-test', '--trial-credits', '250.5');
    expect(acct).toMatchObject({ total: 250.5, toppedUp: false, maxRunning: 2 });

    const key = await json<{ id: string; key: string; prefix: string }>(
      'key',
      'issue',
      acct.accountId,
      '--label',
      'ci',
    );
    expect(key.key).toMatch(/^tk_[A-Za-z0-9_-]{43}$/);
    expect(key.prefix).toBe(key.key.slice(0, 8));

    const keys = await json<{ id: string; prefix: string; revokedAt: string | null }[]>(
      'key',
      'list',
      acct.accountId,
    );
    expect(keys).toEqual([expect.objectContaining({ id: key.id, prefix: key.prefix, revokedAt: null })]);
    expect(JSON.stringify(keys)).not.toContain(key.key);

    const granted = await json('grant', acct.accountId, '100');
    expect(granted).toMatchObject({ total: 350.5, toppedUp: false, maxRunning: 2 });
    const topped = await json('topup', acct.accountId, '0.25');
    expect(topped).toMatchObject({ total: 350.75, toppedUp: true, maxRunning: null });

    const bal = await json('balance', acct.accountId);
    expect(bal).toMatchObject({ currency: 'USD', total: 350.75, reserved: 0, available: 350.75 });
    const usage = await json('usage', acct.accountId);
    expect(usage).toMatchObject({ transcripts: 0, seconds: 0, cost: 0, records: [] });

    const revoked = await json('key', 'revoke', key.id);
    expect(revoked).toEqual({ id: key.id, revoked: true });
    const after = await json<{ revokedAt: string | null }[]>('key', 'list', acct.accountId);
    expect(after[0]!.revokedAt).not.toBeNull();
  });

  it('human output by default', async () => {
    const r = await hark('account', 'create', '--name', 'human');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^Account created\n {2}accountId: acct_/);
  });

  it('clear errors for bad arguments', async () => {
    const bad = await hark('topup', 'acct_x', '-5');
    expect(bad.code).toBe(2);
    const neg = await hark('grant', 'acct_x', 'abc');
    expect(neg.code).toBe(2);
    expect(neg.stderr).toMatch(/positive amount/);
    const missing = await hark('balance', 'acct_does_not_exist');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/no account with id acct_does_not_exist/);
    const noName = await hark('account', 'create');
    expect(noName.code).toBe(2);
    expect(noName.stderr).toMatch(/--name/);
    const unknownKey = await hark('key', 'revoke', 'key_nope');
    expect(unknownKey.code).toBe(2);
    // Operator audit: an empty name, a date that is not ISO 8601, a balance past what is stored.
    const emptyName = await hark('account', 'create', '--name', '  ');
    expect([emptyName.code, emptyName.stderr]).toEqual([2, expect.stringMatching(/name/)]);
    const acct = await json<{ accountId: string }>('account', 'create', '--name', 'cli-edges');
    const looseDate = await hark('usage', acct.accountId, '--since', '5');
    expect([looseDate.code, looseDate.stderr]).toEqual([2, expect.stringMatching(/ISO 8601/)]);
    expect((await hark('usage', acct.accountId, '--since', '2026-02-30')).code).toBe(2);
    expect((await hark('usage', acct.accountId, '--since', '2026-11-01')).code).toBe(0);
    expect((await hark('usage', acct.accountId, '--since', '2026-11-01T10:00:00Z')).code).toBe(0);
    const db = createDb({ databaseUrl: process.env.DATABASE_URL!, poolSize: 1 });
    await db.account.update({ where: { id: acct.accountId }, data: { total: '99999999999999999999' } });
    await db.$disconnect();
    const overflow = await hark('grant', acct.accountId, '1');
    expect([overflow.code, overflow.stderr]).toEqual([2, expect.stringMatching(/largest balance/)]);
    expect(overflow.stderr).not.toMatch(/prisma|invocation/i);
  });

  it('fails fast without configuration', async () => {
    const { stderr, code } = await run(process.execPath, [BIN, 'account', 'list'], {
      env: { PATH: process.env.PATH },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(code).toBe(1);
    expect(stderr).toMatch(/HARK_SECRET is required/);
  });
});
