import { HarkError, type Money, money, newId } from '@hark/core';
import type { Db } from '@hark/db';

/**
 * Operator-side balance movements. Every movement writes a ledger entry in the same
 * transaction as the balance change, so `total = grants + topups - charges` always holds.
 */
export async function createAccount(
  db: Db,
  input: { name: string; trialCredits?: Money | number | string; defaultRetentionDays?: number | null },
): Promise<{ id: string }> {
  const id = newId('acct');
  const credits = money(input.trialCredits ?? 0);
  if (credits.lessThan(0)) throw new RangeError('trial credits cannot be negative');
  await db.$transaction(async (tx) => {
    await tx.account.create({
      data: {
        id,
        name: input.name,
        total: credits.toString(),
        ...(input.defaultRetentionDays !== undefined
          ? { defaultRetentionDays: input.defaultRetentionDays }
          : {}),
      },
    });
    if (credits.greaterThan(0)) {
      await tx.ledgerEntry.create({
        data: {
          id: newId('led'),
          accountId: id,
          kind: 'grant',
          amount: credits.toString(),
          note: 'trial credits',
        },
      });
    }
  });
  return { id };
}

async function credit(
  db: Db,
  accountId: string,
  amount: Money | number | string,
  kind: 'topup' | 'grant',
  note?: string,
) {
  const value = money(amount);
  if (!value.greaterThan(0)) throw new RangeError('amount must be positive');
  return db.$transaction(async (tx) => {
    const n = await tx.$executeRaw`
      UPDATE accounts SET total = total + ${value.toString()}::numeric,
        topped_up = topped_up OR ${kind === 'topup'}
      WHERE id = ${accountId}`;
    if (n !== 1) throw new HarkError('not_found', `No account ${accountId}.`);
    await tx.ledgerEntry.create({
      data: { id: newId('led'), accountId, kind, amount: value.toString(), note: note ?? null },
    });
  });
}

/** Paid credits: lifts the free-tier concurrency limit. */
export function topUp(db: Db, accountId: string, amount: Money | number | string, note?: string) {
  return credit(db, accountId, amount, 'topup', note);
}

/** Free credits: do not lift the concurrency limit. */
export function grant(db: Db, accountId: string, amount: Money | number | string, note?: string) {
  return credit(db, accountId, amount, 'grant', note);
}
