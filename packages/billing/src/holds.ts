import { type Money, costForSeconds, money, newId } from '@hark/core';
import { Prisma } from '@hark/db';
import Decimal from 'decimal.js';

type Tx = Prisma.TransactionClient;

/**
 * Credit holds for transcripts. All functions run inside the caller's transaction and lock the
 * account row (`FOR NO KEY UPDATE`), so concurrent movements on one account serialise and
 * `0 <= reserved <= total` (also a CHECK constraint) holds under any concurrency.
 * Not `FOR UPDATE`: inserting a row that references the account (an idempotency record, a
 * transcript) takes `FOR KEY SHARE` on it, which `FOR UPDATE` conflicts with, so two creates
 * that inserted before locking would deadlock. `FOR NO KEY UPDATE` still excludes itself.
 */
export async function lockAccount(tx: Tx, accountId: string) {
  const rows = await tx.$queryRaw<{ total: Prisma.Decimal; reserved: Prisma.Decimal; topped_up: boolean }[]>`
    SELECT total, reserved, topped_up FROM accounts WHERE id = ${accountId} FOR NO KEY UPDATE`;
  const row = rows[0];
  if (!row) throw new Error(`account ${accountId} not found`);
  return {
    total: new Decimal(row.total.toString()),
    reserved: new Decimal(row.reserved.toString()),
    toppedUp: row.topped_up,
    available: new Decimal(row.total.toString()).minus(row.reserved.toString()),
  };
}

async function move(tx: Tx, accountId: string, reservedDelta: Decimal, totalDelta: Decimal) {
  await tx.$executeRaw`
    UPDATE accounts SET reserved = reserved + ${reservedDelta.toString()}::numeric,
      total = total + ${totalDelta.toString()}::numeric
    WHERE id = ${accountId}`;
}

async function ledger(
  tx: Tx,
  accountId: string,
  kind: 'reserve' | 'release' | 'charge',
  amount: Decimal,
  transcriptId: string,
) {
  if (amount.isZero()) return;
  await tx.ledgerEntry.create({
    data: { id: newId('led'), accountId, kind, amount: amount.toString(), transcriptId },
  });
}

/** The provisional hold at create: `wanted`, or all of `available` if that is less. Returns it. */
export async function placeHold(
  tx: Tx,
  accountId: string,
  transcriptId: string,
  wanted: Money,
  available: Decimal,
) {
  const hold = Decimal.min(money(wanted), available);
  await move(tx, accountId, hold, new Decimal(0));
  await ledger(tx, accountId, 'reserve', hold, transcriptId);
  return hold;
}

/**
 * Moves a transcript's hold to `target` once the real cost is known. Returns false (and
 * changes nothing) when `available` plus the current hold cannot cover it.
 */
export async function adjustHold(
  tx: Tx,
  accountId: string,
  transcriptId: string,
  current: Decimal,
  target: Decimal,
) {
  const acct = await lockAccount(tx, accountId);
  if (acct.available.plus(current).lessThan(target)) return false;
  const delta = target.minus(current);
  await move(tx, accountId, delta, new Decimal(0));
  if (delta.greaterThan(0)) await ledger(tx, accountId, 'reserve', delta, transcriptId);
  if (delta.lessThan(0)) await ledger(tx, accountId, 'release', delta.negated(), transcriptId);
  return true;
}

/** Releases a hold without charging (failed, canceled). */
export async function releaseHold(tx: Tx, accountId: string, transcriptId: string, hold: Decimal) {
  await lockAccount(tx, accountId);
  await move(tx, accountId, hold.negated(), new Decimal(0));
  await ledger(tx, accountId, 'release', hold, transcriptId);
}

/**
 * Releases the hold and charges the real cost in one step. The unique index on charge entries
 * per transcript and on usage records makes a second charge impossible, not just unlikely.
 */
export async function chargeAndRelease(
  tx: Tx,
  input: { accountId: string; transcriptId: string; hold: Decimal; seconds: number; rate: Decimal.Value },
) {
  const cost = costForSeconds(input.seconds, input.rate);
  await lockAccount(tx, input.accountId);
  await move(tx, input.accountId, input.hold.negated(), cost.negated());
  await ledger(tx, input.accountId, 'release', input.hold, input.transcriptId);
  await ledger(tx, input.accountId, 'charge', cost, input.transcriptId);
  await tx.usageRecord.create({
    data: {
      id: newId('use'),
      accountId: input.accountId,
      transcriptId: input.transcriptId,
      seconds: input.seconds,
      rate: new Decimal(input.rate).toString(),
      cost: cost.toString(),
    },
  });
  return cost;
}
