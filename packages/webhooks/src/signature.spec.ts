import { createHash, createHmac } from 'node:crypto';
import { parseSignatureHeader, signingSecretFromApiKey, signPayload, verifySignature } from './signature';

const apiKey = 'tk_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6';
const secret = signingSecretFromApiKey(apiKey);
const body = '{"id":"tr_1","status":"done","metadata":{"note":"é ✓"}}';
const t = 1_700_000_000;
const at = (seconds: number) => new Date(seconds * 1000);

describe('signingSecretFromApiKey', () => {
  it('is the lowercase hex SHA-256 of the key', () => {
    expect(secret).toBe(createHash('sha256').update(apiKey).digest('hex'));
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    // Vector from `printf tk_test | openssl dgst -sha256`, so encoding or case cannot drift.
    expect(signingSecretFromApiKey('tk_test')).toBe(
      'c566158525c2647f59ef9a390eacf7f9dc66550ac0a984712fa02c71c7d31e82',
    );
  });
});

describe('signPayload', () => {
  it('signs "<t>.<body>" with the hex secret as UTF-8 key bytes', () => {
    const expected = createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
    expect(signPayload(body, secret, t)).toBe(`t=${t},v1=${expected}`);
  });

  it('matches a vector computed with openssl', () => {
    // printf '1700000000.{"id":"tr_1"}' | openssl dgst -sha256 -hmac "$(printf tk_test | sha256sum | cut -c1-64)"
    expect(signPayload('{"id":"tr_1"}', signingSecretFromApiKey('tk_test'), 1_700_000_000)).toBe(
      't=1700000000,v1=8723657d23348105636738144f0b9bb1c6381f20055b777a067737e390b406c8',
    );
  });

  it('defaults t to now, in whole seconds', () => {
    const before = Math.floor(Date.now() / 1000);
    const parsed = parseSignatureHeader(signPayload(body, secret));
    expect(parsed?.t).toBeGreaterThanOrEqual(before);
    expect(parsed?.t).toBeLessThanOrEqual(before + 1);
  });

  it('refuses a t that is not whole seconds', () => {
    expect(() => signPayload(body, secret, 1.5)).toThrow(RangeError);
    expect(() => signPayload(body, secret, -1)).toThrow(RangeError);
    expect(() => signPayload(body, secret, Date.now() * 1e6)).toThrow(RangeError);
  });
});

describe('verifySignature', () => {
  const header = signPayload(body, secret, t);

  it('accepts its own signature within the tolerance, either side', () => {
    expect(verifySignature(body, header, apiKey, { now: at(t) })).toBe(true);
    expect(verifySignature(body, header, apiKey, { now: at(t + 300) })).toBe(true);
    expect(verifySignature(body, header, apiKey, { now: at(t - 300) })).toBe(true);
  });

  it('refuses a t older or newer than the tolerance', () => {
    expect(verifySignature(body, header, apiKey, { now: at(t + 301) })).toBe(false);
    expect(verifySignature(body, header, apiKey, { now: at(t - 301) })).toBe(false);
    expect(verifySignature(body, header, apiKey, { now: at(t + 60), toleranceSeconds: 30 })).toBe(false);
    expect(verifySignature(body, header, apiKey, { now: at(t + 3600), toleranceSeconds: 3600 })).toBe(true);
  });

  it('uses the real clock by default', () => {
    expect(verifySignature(body, signPayload(body, secret), apiKey)).toBe(true);
    expect(verifySignature(body, header, apiKey)).toBe(false); // t is from 2023
  });

  it('refuses a changed body, another key, or a changed t', () => {
    const now = { now: at(t) };
    expect(verifySignature(body + ' ', header, apiKey, now)).toBe(false);
    expect(verifySignature(JSON.stringify(JSON.parse(body)), header, apiKey, now)).toBe(true); // same bytes
    expect(verifySignature('{"id": "tr_1"}', header, apiKey, now)).toBe(false);
    expect(verifySignature(body, header, apiKey + 'x', now)).toBe(false);
    expect(verifySignature(body, header.replace(`t=${t}`, `t=${t + 1}`), apiKey, { now: at(t + 1) })).toBe(
      false,
    );
  });

  it('refuses a signature keyed with the raw 32 secret bytes instead of the hex text', () => {
    const wrong = createHmac('sha256', Buffer.from(secret, 'hex')).update(`${t}.${body}`).digest('hex');
    expect(verifySignature(body, `t=${t},v1=${wrong}`, apiKey, { now: at(t) })).toBe(false);
  });

  it('accepts any matching v1 entry (key rotation), in any position', () => {
    const v1 = header.split('v1=')[1] ?? '';
    const other = 'f'.repeat(64);
    expect(verifySignature(body, `t=${t},v1=${other},v1=${v1}`, apiKey, { now: at(t) })).toBe(true);
    expect(verifySignature(body, `v1=${v1},t=${t},v1=${other}`, apiKey, { now: at(t) })).toBe(true);
    expect(verifySignature(body, `t=${t},v1=${other}`, apiKey, { now: at(t) })).toBe(false);
  });

  it('ignores unknown schemes so a future v2 does not break receivers', () => {
    expect(verifySignature(body, `${header},v2=abc`, apiKey, { now: at(t) })).toBe(true);
    expect(verifySignature(body, `t=${t},v0=${'0'.repeat(64)}`, apiKey, { now: at(t) })).toBe(false);
  });

  it.each([
    '',
    'garbage',
    `t=${t}`, // no v1
    `v1=${'a'.repeat(64)}`, // no t
    `t=${t},t=${t},v1=${'a'.repeat(64)}`, // duplicate t
    `t=-5,v1=${'a'.repeat(64)}`,
    `t=1e9,v1=${'a'.repeat(64)}`,
    `t=${t}.5,v1=${'a'.repeat(64)}`,
    `t=,v1=${'a'.repeat(64)}`,
    `t=${t},v1=${'A'.repeat(64)}`, // uppercase hex
    `t=${t},v1=${'a'.repeat(63)}`, // short
    `t=${t},v1=${'a'.repeat(65)}`, // long
    `t=${t}, v1=${'a'.repeat(64)}`, // space
    ` t=${t},v1=${'a'.repeat(64)}`,
    `t=${t},,v1=${'a'.repeat(64)}`, // empty pair
    `t=${t},v1=${'a'.repeat(64)},`, // trailing comma
    `t=${t};v1=${'a'.repeat(64)}`,
    `T=${t},v1=${'a'.repeat(64)}`,
    `t=${t},${Array.from({ length: 9 }, () => `v1=${'a'.repeat(64)}`).join(',')}`, // too many
    `t=${t},v1=${'a'.repeat(64)},x=${'y'.repeat(5000)}`, // too long
  ])('refuses the malformed header %j', (bad) => {
    expect(parseSignatureHeader(bad)).toBeNull();
    expect(verifySignature(body, bad, apiKey, { now: at(t) })).toBe(false);
  });

  it('parses a well-formed header', () => {
    expect(parseSignatureHeader(`t=12,v1=${'a'.repeat(64)},v1=${'b'.repeat(64)}`)).toEqual({
      t: 12,
      v1: ['a'.repeat(64), 'b'.repeat(64)],
    });
  });
});
