import { HarkError, moneyToJson } from '@hark/core';
import type { PgPool } from '@hark/db';

export interface BalanceView {
  currency: 'USD';
  total: number;
  reserved: number;
  available: number;
}

export class BalanceService {
  constructor(private readonly pool: PgPool) {}

  /** Read by every polling client: a named query on the pool, without Prisma's query building. */
  async get(accountId: string): Promise<BalanceView> {
    const { rows } = await this.pool.query<{ total: string; reserved: string; available: string }>({
      name: 'hark_balance',
      text: 'SELECT total::text, reserved::text, (total - reserved)::text AS available FROM accounts WHERE id = $1',
      values: [accountId],
    });
    const a = rows[0];
    if (!a) throw new HarkError('invalid_api_key');
    return {
      currency: 'USD',
      total: moneyToJson(a.total),
      reserved: moneyToJson(a.reserved),
      available: moneyToJson(a.available),
    };
  }
}
