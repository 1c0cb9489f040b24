import { CallBatcher, HarkError, moneyToJson } from '@hark/core';
import type { PgPool } from '@hark/db';

export interface BalanceView {
  currency: 'USD';
  total: number;
  reserved: number;
  available: number;
}

interface BalanceRow {
  id: string;
  total: string;
  reserved: string;
  available: string;
}

export class BalanceService {
  /**
   * Read by every polling client: the reads of one event-loop turn go out as one named query
   * (no Prisma query building), each account once. Every read starts after its request arrived.
   */
  private readonly reads: CallBatcher<string, BalanceRow | undefined>;

  constructor(pool: PgPool) {
    this.reads = new CallBatcher(
      async (accountIds) => {
        const { rows } = await pool.query<BalanceRow>({
          name: 'hark_balances',
          text:
            'SELECT id, total::text, reserved::text, (total - reserved)::text AS available' +
            ' FROM accounts WHERE id = ANY($1::text[])',
          values: [[...new Set(accountIds)]],
        });
        const byId = new Map(rows.map((r) => [r.id, r]));
        return accountIds.map((id) => byId.get(id));
      },
      { maxBatch: 256 },
    );
  }

  async get(accountId: string): Promise<BalanceView> {
    const a = await this.reads.call(accountId);
    if (!a) throw new HarkError('invalid_api_key');
    return {
      currency: 'USD',
      total: moneyToJson(a.total),
      reserved: moneyToJson(a.reserved),
      available: moneyToJson(a.available),
    };
  }
}
