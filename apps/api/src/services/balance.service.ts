import { HarkError, moneyToJson } from '@hark/core';
import type { Db } from '@hark/db';

export interface BalanceView {
  currency: 'USD';
  total: number;
  reserved: number;
  available: number;
}

export class BalanceService {
  constructor(private readonly db: Db) {}

  async get(accountId: string): Promise<BalanceView> {
    const rows = await this.db.$queryRaw<{ total: string; reserved: string; available: string }[]>`
      SELECT total::text, reserved::text, (total - reserved)::text AS available FROM accounts WHERE id = ${accountId}`;
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
