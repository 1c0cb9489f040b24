import { bearerMatches, tokenMatches } from './bearer';

describe('bearerMatches', () => {
  it.each(['Bearer s3cret-token', 'bearer s3cret-token', 'BEARER s3cret-token', 'Bearer   s3cret-token'])(
    'accepts %p (the scheme in any case, RFC 9110; spaces before the token)',
    (header) => {
      expect(bearerMatches(header, 's3cret-token')).toBe(true);
    },
  );

  it.each([
    undefined,
    '',
    'Bearer ',
    'Bearer\ts3cret-token',
    'Bearers3cret-token',
    'Bearer s3cret token',
    'Bearer s3cret-tokenX',
    'Bearer s3cret',
    's3cret-token',
    'Basic s3cret-token',
  ])('refuses %p', (header) => {
    expect(bearerMatches(header, 's3cret-token')).toBe(false);
  });

  it('an empty token matches nothing, not even an empty bearer', () => {
    expect(bearerMatches('Bearer ', '')).toBe(false);
    expect(bearerMatches(undefined, '')).toBe(false);
  });
});

describe('tokenMatches', () => {
  it('equal values only; never an empty token', () => {
    expect(tokenMatches('abc', 'abc')).toBe(true);
    expect(tokenMatches('abcd', 'abc')).toBe(false);
    expect(tokenMatches('', '')).toBe(false);
  });
});
