import { createAccount, grant, issueApiKey, listApiKeys, revokeApiKey, topUp } from '@hark/billing';
import { LIMITS } from '@hark/core';
import type { Db } from '@hark/db';
import Decimal from 'decimal.js';
import { Money } from './format';

/** NUMERIC(30,10) has 30 digits; Decimal's default precision is 20 significant digits. */
const Exact = Decimal.clone({ precision: 40 });

/** Operator commands: each returns plain data; the caller prints it as text or JSON. */
export class OperatorCommands {
  constructor(
    private readonly db: Db,
    private readonly secret: string,
  ) {}

  async createAccount(name: string, trialCredits?: string, retentionDays?: number | null) {
    const { id } = await createAccount(this.db, {
      name,
      ...(trialCredits !== undefined ? { trialCredits } : {}),
      ...(retentionDays !== undefined ? { defaultRetentionDays: retentionDays } : {}),
    });
    return this.balance(id);
  }

  async listAccounts() {
    const rows = await this.db.account.findMany({ orderBy: { createdAt: 'asc' } });
    return rows.map((a) => ({
      id: a.id,
      name: a.name,
      toppedUp: a.toppedUp,
      createdAt: a.createdAt.toISOString(),
    }));
  }

  async issueKey(accountId: string, label?: string) {
    const k = await issueApiKey(this.db, this.secret, accountId, label);
    return { id: k.id, accountId, prefix: k.prefix, key: k.key, createdAt: k.createdAt.toISOString() };
  }

  async revokeKey(keyId: string) {
    await revokeApiKey(this.db, keyId);
    return { id: keyId, revoked: true };
  }

  async listKeys(accountId: string) {
    await this.requireAccount(accountId);
    const keys = await listApiKeys(this.db, accountId);
    return keys.map((k) => ({
      id: k.id,
      prefix: k.prefix,
      label: k.label,
      createdAt: k.createdAt.toISOString(),
      revokedAt: k.revokedAt?.toISOString() ?? null,
    }));
  }

  async topUp(accountId: string, amount: string) {
    await topUp(this.db, accountId, amount).catch(tooLarge);
    return this.balance(accountId);
  }

  async grant(accountId: string, amount: string) {
    await grant(this.db, accountId, amount).catch(tooLarge);
    return this.balance(accountId);
  }

  async balance(accountId: string) {
    const a = await this.requireAccount(accountId);
    return {
      accountId: a.id,
      name: a.name,
      currency: 'USD',
      total: new Money(a.total),
      reserved: new Money(a.reserved),
      available: new Money(new Exact(a.total.toString()).minus(a.reserved.toString())),
      toppedUp: a.toppedUp,
      maxRunning: a.toppedUp ? null : LIMITS.freeConcurrentTranscripts,
      defaultRetentionDays: a.defaultRetentionDays,
    };
  }

  async usage(accountId: string, since?: Date) {
    await this.requireAccount(accountId);
    const where = { accountId, ...(since ? { createdAt: { gte: since } } : {}) };
    const [records, sum] = await Promise.all([
      this.db.usageRecord.findMany({ where, orderBy: { createdAt: 'asc' } }),
      this.db.usageRecord.aggregate({ where, _sum: { cost: true, seconds: true }, _count: true }),
    ]);
    return {
      accountId,
      transcripts: sum._count,
      seconds: sum._sum.seconds ?? 0,
      cost: new Money(sum._sum.cost ?? 0),
      records: records.map((r) => ({
        transcriptId: r.transcriptId,
        seconds: r.seconds,
        rate: new Money(r.rate),
        cost: new Money(r.cost),
        createdAt: r.createdAt.toISOString(),
      })),
    };
  }

  private async requireAccount(accountId: string) {
    const a = await this.db.account.findUnique({ where: { id: accountId } });
    if (!a) throw new UsageError(`no account with id ${accountId}`);
    return a;
  }
}

/** A mistake by the operator: printed without a stack trace, exit code 2. */
export class UsageError extends Error {}

/** Postgres refusing a balance past NUMERIC(30,10) (SQLSTATE 22003): the operator's mistake, not a crash. */
function tooLarge(error: unknown): never {
  if (/numeric field overflow|22003/.test(String((error as Error).message)))
    throw new UsageError('the balance would pass the largest balance stored (under 10^20 cents)');
  throw error;
}
