// What every fault scenario checks once the system has settled, straight from Postgres.
import type { Db } from '@hark/db';
import { checkAccountInvariants } from '../invariants';
import { waitFor } from '../wait-for';

/** Whether nothing of these accounts is `processing` within `timeout` (polled every 200 ms). */
export async function settle(db: Db, accountIds: string[], timeout: number): Promise<boolean> {
  try {
    await waitFor(
      async () =>
        (await db.transcript.count({ where: { accountId: { in: accountIds }, status: 'processing' } })) === 0,
      {
        timeout,
        interval: 200,
        message: 'no transcript processing',
      },
    );
    return true;
  } catch {
    return false;
  }
}

/**
 * The invariants after every scenario: the money invariants per account, at most one charge per
 * transcript, nothing still processing, and (`receiverUp`) a delivered notice for each done or
 * failed transcript with a webhook URL (waited for up to 20 s each).
 */
export async function invariants(
  db: Db,
  accountIds: string[],
  opts: { receiverUp?: boolean } = {},
): Promise<string[]> {
  const problems: string[] = [];
  for (const a of accountIds)
    problems.push(...(await checkAccountInvariants(db, a)).map((p) => `${a}: ${p}`));
  const dup = await db.$queryRaw<{ transcript_id: string; n: bigint }[]>`
    SELECT transcript_id, count(*) AS n FROM ledger_entries
    WHERE kind = 'charge' AND account_id = ANY(${accountIds}) GROUP BY transcript_id HAVING count(*) > 1`;
  for (const d of dup) problems.push(`${d.transcript_id} charged ${d.n} times`);
  const stuck = await db.transcript.findMany({
    where: { accountId: { in: accountIds }, status: 'processing' },
    select: { id: true },
  });
  if (stuck.length) problems.push(`still processing: ${stuck.map((s) => s.id).join(',')}`);
  if (opts.receiverUp) {
    const noticed = await db.transcript.findMany({
      where: { accountId: { in: accountIds }, status: { in: ['done', 'failed'] }, webhookUrl: { not: null } },
      select: { id: true },
    });
    for (const t of noticed) {
      const ok = await waitFor(
        async () => (await db.webhookDelivery.count({ where: { transcriptId: t.id, delivered: true } })) > 0,
        {
          timeout: 20_000,
          interval: 200,
        },
      ).catch(() => false);
      if (!ok) problems.push(`lost notice for ${t.id}`);
    }
  }
  return problems;
}

/** Transcripts of these accounts by status. */
export async function statusCounts(db: Db, accountIds: string[]): Promise<Record<string, number>> {
  const g = await db.transcript.groupBy({
    by: ['status'],
    where: { accountId: { in: accountIds } },
    _count: true,
  });
  return Object.fromEntries(g.map((x) => [x.status, x._count]));
}

/** `k=v k=v` for the figures column. */
export const fmt = (o: Record<string, number | string>): string =>
  Object.entries(o)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');

/** How many of `items` fall under each key. */
export function tally<T>(items: Iterable<T>, key: (x: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of items) out[key(x)] = (out[key(x)] ?? 0) + 1;
  return out;
}
