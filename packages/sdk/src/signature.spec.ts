import crypto from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { verifySignature } from './signature';

// Signed as the service signs notices, written here from the spec with node:crypto (the SDK does
// not depend on @hark/webhooks; packages/webhooks/src/signature.spec.ts checks that the notices
// the dispatcher's signer produces verify with this verifySignature).
const signingSecretFromApiKey = (key: string) =>
  crypto.createHash('sha256').update(key, 'utf8').digest('hex');
function signPayload(b: string, secretHex: string, when = Math.floor(Date.now() / 1000)): string {
  const mac = crypto.createHmac('sha256', Buffer.from(secretHex, 'utf8')).update(`${when}.${b}`, 'utf8');
  return `t=${when},v1=${mac.digest('hex')}`;
}

const apiKey = 'tk_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6';
const body = '{"id":"tr_1","status":"done","metadata":{"note":"é ✓"}}';
const t = 1_700_000_000;
const at = (seconds: number) => ({ now: new Date(seconds * 1000) });
const signed = (b: string, when = t, key = apiKey) => signPayload(b, signingSecretFromApiKey(key), when);

describe('verifySignature', () => {
  it('accepts notices signed as the service signs them, given the body as a string or as bytes', () => {
    const header = signed(body);
    expect(verifySignature(body, header, apiKey, at(t))).toBe(true);
    expect(verifySignature(Buffer.from(body, 'utf8'), header, apiKey, at(t))).toBe(true);
    expect(verifySignature(new Uint8Array(Buffer.from(body)), header, apiKey, at(t))).toBe(true);
  });

  it('matches the openssl vector of the service', () => {
    // printf '1700000000.{"id":"tr_1"}' | openssl dgst -sha256 -hmac "$(printf tk_test | sha256sum | cut -c1-64)"
    const header = 't=1700000000,v1=8723657d23348105636738144f0b9bb1c6381f20055b777a067737e390b406c8';
    expect(verifySignature('{"id":"tr_1"}', header, 'tk_test', at(t))).toBe(true);
  });

  it('refuses a changed body, another key, or a re-serialised body', () => {
    const header = signed(body);
    expect(verifySignature(body.replace('done', 'failed'), header, apiKey, at(t))).toBe(false);
    expect(verifySignature(body, header, apiKey + 'x', at(t))).toBe(false);
    expect(verifySignature(JSON.stringify(JSON.parse(body), null, 1), header, apiKey, at(t))).toBe(false);
  });

  it('refuses a t outside the tolerance either way (300 s by default)', () => {
    const header = signed(body);
    expect(verifySignature(body, header, apiKey, at(t + 300))).toBe(true);
    expect(verifySignature(body, header, apiKey, at(t - 300))).toBe(true);
    expect(verifySignature(body, header, apiKey, at(t + 301))).toBe(false);
    expect(verifySignature(body, header, apiKey, at(t - 301))).toBe(false);
    expect(verifySignature(body, header, apiKey, { ...at(t + 3600), toleranceSeconds: 3600 })).toBe(true);
    expect(verifySignature(body, signPayload(body, signingSecretFromApiKey(apiKey)), apiKey)).toBe(true);
  });

  it('fails closed on a tolerance or a clock that is not a number (an unset variable, an invalid Date)', () => {
    // A year-old notice used to pass: NaN made the freshness check false, so it checked nothing.
    const old = signed(body, t - 365 * 86_400);
    for (const options of [
      { ...at(t), toleranceSeconds: Number.NaN },
      { ...at(t), toleranceSeconds: Number(process.env.HARK_UNSET_TOLERANCE) },
      { now: new Date('not a date') },
    ]) {
      expect(verifySignature(body, old, apiKey, options)).toBe(false);
      expect(verifySignature(body, signed(body), apiKey, options)).toBe(false);
    }
  });

  it('accepts any matching v1 among several (key rotation) and ignores unknown schemes', () => {
    const good = signed(body).split(',')[1]!;
    const other = signed(body, t, 'tk_other').split(',')[1]!;
    expect(verifySignature(body, `t=${t},${other},${good}`, apiKey, at(t))).toBe(true);
    expect(verifySignature(body, `t=${t},v0=abc,${good}`, apiKey, at(t))).toBe(true);
    expect(verifySignature(body, `t=${t},${other}`, apiKey, at(t))).toBe(false);
  });

  it.each([
    ['absent', undefined],
    ['null', null],
    ['sent twice', ['t=1,v1=' + '0'.repeat(64), 't=1,v1=' + '0'.repeat(64)]],
    ['empty', ''],
    ['no v1', `t=${t}`],
    ['no t', `v1=${'a'.repeat(64)}`],
    ['two t', `t=${t},t=${t},v1=${'a'.repeat(64)}`],
    ['uppercase hex', `t=${t},v1=${'A'.repeat(64)}`],
    ['short hex', `t=${t},v1=${'a'.repeat(63)}`],
    ['spaces', `t=${t}, v1=${'a'.repeat(64)}`],
    ['too long', `t=${t},v1=${'a'.repeat(64)},x=${'y'.repeat(5000)}`],
    ['too many v1', `t=${t}` + `,v1=${'a'.repeat(64)}`.repeat(9)],
  ])('refuses a malformed header: %s', (_label, header) => {
    expect(verifySignature(body, header, apiKey, at(t))).toBe(false);
  });

  it('compares every candidate in constant time', () => {
    const spy = jest.spyOn(crypto, 'timingSafeEqual');
    const good = signed(body).split(',')[1]!;
    const other = signed(body, t, 'tk_other').split(',')[1]!;
    expect(verifySignature(body, `t=${t},${good},${other}`, apiKey, at(t))).toBe(true);
    // No early exit after the first match.
    expect(spy).toHaveBeenCalledTimes(2);
    spy.mockRestore();
  });
});

describe('runtime dependencies', () => {
  it('the SDK loads only node: built-ins and its own files', () => {
    const dir = __dirname;
    const files = readdirSync(dir).filter(
      (f) => f.endsWith('.ts') && !f.endsWith('.spec.ts') && !f.endsWith('.fixture.ts'),
    );
    expect(files).toContain('index.ts');
    for (const f of files) {
      const src = readFileSync(path.join(dir, f), 'utf8');
      // `import type` is erased at build time; everything else must be node:* or relative.
      const specifiers = [...src.matchAll(/^(?:import|export)(?!\s+type\b)[^'";]*?from\s+'([^']+)'/gm)].map(
        (m) => m[1]!,
      );
      for (const s of specifiers) expect([f, s]).toEqual([f, expect.stringMatching(/^(node:|\.\/)/)]);
    }
  });
});
