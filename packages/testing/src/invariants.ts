import type { Db } from '@hark/db';
import Decimal from 'decimal.js';

/**
 * Money invariants for one account, straight from Postgres:
 * total == grants + topups - charges; reserved == sum of holds of processing transcripts;
 * at most one charge per transcript and none for failed or canceled ones.
 */
export async function checkAccountInvariants(db: Db, accountId: string): Promise<string[]> {
  const problems: string[] = [];
  const a = await db.account.findUniqueOrThrow({ where: { id: accountId } });
  const sums = await db.ledgerEntry.groupBy({ by: ['kind'], where: { accountId }, _sum: { amount: true } });
  const sum = (k: string) => new Decimal(sums.find((s) => s.kind === k)?._sum.amount?.toString() ?? 0);
  const total = new Decimal(a.total.toString());
  const reserved = new Decimal(a.reserved.toString());
  const expected = sum('grant').plus(sum('topup')).minus(sum('charge'));
  if (!total.equals(expected))
    problems.push(`total ${total.toString()} != grants+topups-charges ${expected.toString()}`);
  if (!reserved.equals(sum('reserve').minus(sum('release')))) {
    problems.push(
      `reserved ${reserved.toString()} != reserves-releases ${sum('reserve').minus(sum('release')).toString()}`,
    );
  }
  if (reserved.lessThan(0) || total.lessThan(0) || reserved.greaterThan(total))
    problems.push('balance out of range');
  const holds = await db.transcript.aggregate({
    where: { accountId, status: 'processing' },
    _sum: { reserved: true },
  });
  const held = new Decimal(holds._sum.reserved?.toString() ?? 0);
  if (!held.equals(reserved))
    problems.push(`reserved ${reserved.toString()} != holds of processing transcripts ${held.toString()}`);
  const badCharges = await db.$queryRaw<{ id: string }[]>`
    SELECT t.id FROM transcripts t JOIN ledger_entries l ON l.transcript_id = t.id AND l.kind = 'charge'
    WHERE t.account_id = ${accountId} AND t.status <> 'done'`;
  if (badCharges.length > 0) problems.push(`charged but not done: ${badCharges.map((r) => r.id).join(',')}`);
  return problems;
}
