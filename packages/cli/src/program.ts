import { Command, CommanderError, InvalidArgumentError } from 'commander';
import type { Db } from '@hark/db';
import { isHarkError } from '@hark/core';
import { OperatorCommands, UsageError } from './commands';
import { formatHuman, formatJson } from './format';

type Connect = () => Promise<{ db: Db; secret: string }>;

/** Amounts are cents (USD minor units), positive decimals with at most 10 decimal places. */
export function parseAmount(v: string): string {
  if (!/^\d{1,18}(\.\d{1,10})?$/.test(v) || Number(v) <= 0) {
    throw new InvalidArgumentError('expected a positive amount in cents, e.g. 500 or 12.5');
  }
  return v;
}

function parseRetention(v: string): number | null {
  if (v === 'forever' || v === 'none') return null;
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 3650) {
    throw new InvalidArgumentError('expected a number of days (1-3650) or "forever"');
  }
  return Number(v);
}

/** A date, or a date and time (`2026-11-01`, `2026-11-01T10:00:00Z`); JavaScript's looser forms (`5`) are refused. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

function parseDate(v: string): Date {
  const d = new Date(v);
  // `Date` rolls impossible days over (2026-02-30 is March 2): the calendar date must survive.
  const day = /^\d{4}-\d{2}-\d{2}$/.test(v) ? d.toISOString().slice(0, 10) === v : true;
  if (!ISO_8601.test(v) || Number.isNaN(d.getTime()) || !day)
    throw new InvalidArgumentError('expected an ISO 8601 date');
  return d;
}

function parseName(v: string): string {
  if (v.trim() === '') throw new InvalidArgumentError('expected a name that is not empty');
  return v.trim();
}

export function buildProgram(connect: Connect, setExit: (code: number) => void, out = console): Command {
  const program = new Command('hark')
    .description('Hark operator CLI: accounts, API keys, credits')
    .option('--json', 'print JSON for scripts')
    .exitOverride()
    .configureOutput({ writeErr: (s) => out.error(s.trimEnd()) });

  const run = (title: string, fn: (c: OperatorCommands) => Promise<unknown>) => async () => {
    const { db, secret } = await connect();
    try {
      const result = await fn(new OperatorCommands(db, secret));
      out.log(program.opts().json ? formatJson(result) : formatHuman(title, result));
    } catch (e) {
      if (e instanceof UsageError || isHarkError(e) || e instanceof RangeError) {
        out.error(`hark: ${e.message}`);
        setExit(2);
        return;
      }
      throw e;
    } finally {
      await db.$disconnect();
    }
  };

  const account = program.command('account').description('manage accounts');
  account
    .command('create')
    .requiredOption('--name <name>', 'account name', parseName)
    .option('--trial-credits <cents>', 'free credits granted at creation (not a top-up)', parseAmount)
    .option(
      '--retention-days <days>',
      'default content retention in days, or "forever" (default 30)',
      parseRetention,
    )
    .action((o: { name: string; trialCredits?: string; retentionDays?: number | null }) =>
      run('Account created', (c) => c.createAccount(o.name, o.trialCredits, o.retentionDays))(),
    );
  account.command('list').action(() => run('Accounts', (c) => c.listAccounts())());

  const key = program.command('key').description('manage API keys');
  key
    .command('issue <accountId>')
    .option('--label <label>', 'a note to recognise the key by')
    .action((id: string, o: { label?: string }) =>
      run('API key issued (shown once; store it now)', (c) => c.issueKey(id, o.label))(),
    );
  key.command('revoke <keyId>').action((id: string) => run('API key revoked', (c) => c.revokeKey(id))());
  key.command('list <accountId>').action((id: string) => run('API keys', (c) => c.listKeys(id))());

  program
    .command('topup')
    .description('add paid credits (lifts the concurrency limit)')
    .argument('<accountId>')
    .argument('<cents>', 'amount in cents', parseAmount)
    .action((id: string, cents: string) => run('Topped up', (c) => c.topUp(id, cents))());
  program
    .command('grant')
    .description('add free credits (does not lift the concurrency limit)')
    .argument('<accountId>')
    .argument('<cents>', 'amount in cents', parseAmount)
    .action((id: string, cents: string) => run('Granted', (c) => c.grant(id, cents))());
  program.command('balance <accountId>').action((id: string) => run('Balance', (c) => c.balance(id))());
  program
    .command('usage <accountId>')
    .option('--since <date>', 'only usage at or after this ISO 8601 date', parseDate)
    .action((id: string, o: { since?: Date }) => run('Usage', (c) => c.usage(id, o.since))());

  return program;
}

export { CommanderError };
