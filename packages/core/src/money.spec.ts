import Decimal from 'decimal.js';
import { moneyToJson } from './money';

const viaDecimal = (s: string) => Number(new Decimal(s).toString());

describe('moneyToJson', () => {
  it('renders Postgres NUMERIC text exactly as the Decimal round trip does', () => {
    const samples = [
      '0',
      '0.0000000000',
      '12.5000000000',
      '-3.1000000000',
      '1000',
      '0.0000000001',
      '99999999999999999999.9999999999',
    ];
    let seed = 7;
    const rand = () => (seed = (seed * 48271) % 2147483647);
    for (let i = 0; i < 5000; i++) {
      const int = String(rand() % 10 ** (1 + (i % 9)));
      const frac = String(rand()).padStart(10, '0').slice(0, 10);
      samples.push(`${i % 7 === 0 ? '-' : ''}${int}.${frac}`);
    }
    for (const s of samples) expect(moneyToJson(s)).toBe(viaDecimal(s));
  });

  it('still takes Decimals, numbers and other notations', () => {
    expect(moneyToJson(new Decimal('12.50'))).toBe(12.5);
    expect(moneyToJson(0.1)).toBe(0.1);
    expect(moneyToJson('1e3')).toBe(1000);
    expect(moneyToJson('+2.5')).toBe(2.5);
  });
});
