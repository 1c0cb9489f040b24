import { parseCorsOrigins } from './cors';

describe('parseCorsOrigins', () => {
  it('reads none, any, or a list of origins', () => {
    expect(parseCorsOrigins(undefined)).toEqual([]);
    expect(parseCorsOrigins(' ')).toEqual([]);
    expect(parseCorsOrigins('*')).toBe('*');
    expect(parseCorsOrigins('https://a.example, http://localhost:5173')).toEqual([
      'https://a.example',
      'http://localhost:5173',
    ]);
  });

  it('refuses what a browser never sends as an origin, naming the variable', () => {
    for (const bad of [
      'a.example',
      'https://a.example/',
      'https://a.example/app',
      'ftp://a.example',
      '*.example.com',
    ]) {
      expect(() => parseCorsOrigins(bad)).toThrow(/HARK_CORS_ORIGINS/);
    }
  });
});
