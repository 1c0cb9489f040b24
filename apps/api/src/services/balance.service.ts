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
    const a = await this.db.account.findUnique({ where: { id: accountId }, select: { total: true, reserved: true } });
    if (!a) throw new HarkError('invalid_api_key');
    return {
      currency: 'USD',
      total: moneyToJson(a.total),
      reserved: moneyToJson(a.reserved),
      available: moneyToJson(a.total.minus(a.reserved)),
    };
  }
}
