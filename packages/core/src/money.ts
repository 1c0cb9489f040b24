import Decimal from 'decimal.js';

/**
 * Money is USD minor units (cents), fractional, computed with exact decimals.
 * Stored as NUMERIC(30,10): cost is rounded half-up to 10 decimal places of a cent,
 * the only rounding anywhere in billing.
 */
export const MONEY_SCALE = 10;

export type Money = Decimal;
export const Money = Decimal;

export function money(v: Decimal.Value): Decimal {
  return new Decimal(v).toDecimalPlaces(MONEY_SCALE, Decimal.ROUND_HALF_UP);
}

/** cost = seconds x rate / 3600, rate in cents per hour. */
export function costForSeconds(seconds: number, ratePerHour: Decimal.Value): Decimal {
  return new Decimal(seconds)
    .times(ratePerHour)
    .dividedBy(3600)
    .toDecimalPlaces(MONEY_SCALE, Decimal.ROUND_HALF_UP);
}

/** A plain decimal numeral, as Postgres renders NUMERIC as text. */
const PLAIN_DECIMAL = /^-?\d+(\.\d+)?$/;

/** JSON numbers for the API: exact decimals rendered as the nearest double. */
export function moneyToJson(v: Decimal.Value | { toString(): string }): number {
  // Number() parses a plain numeral correctly rounded to the nearest double, as the Decimal
  // round trip does, without allocating (the balance read renders three per request).
  if (typeof v === 'string' && PLAIN_DECIMAL.test(v)) return Number(v);
  return Number(new Decimal(v.toString()).toString());
}
