import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

/**
 * API keys: `tk_` + 43 URL-safe random characters (256 bits), shown once.
 * At rest: HMAC-SHA256 keyed with HARK_SECRET for look-up (a database dump verifies nothing),
 * and the webhook signing secret SHA-256(key) sealed with AES-256-GCM under HARK_SECRET.
 */
export const API_KEY_PREFIX = 'tk_';
const DISPLAY_PREFIX_CHARS = 8;

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_CHARS);
}

export function hmacApiKey(key: string, secret: string): string {
  return createHmac('sha256', secret).update(key).digest('hex');
}

/** The spec's webhook key: lowercase hex SHA-256 of the API key. */
export function webhookSecretOf(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

function aesKey(secret: string): Buffer {
  return createHash('sha256').update('hark:seal:v1:').update(secret).digest();
}

/** AES-256-GCM; output `v1.<iv>.<tag>.<ciphertext>` in base64url. */
export function seal(plain: string, secret: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', aesKey(secret), iv);
  const ct = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
  return [
    'v1',
    iv.toString('base64url'),
    c.getAuthTag().toString('base64url'),
    ct.toString('base64url'),
  ].join('.');
}

export function unseal(sealed: string, secret: string): string {
  const [v, iv, tag, ct] = sealed.split('.');
  if (v !== 'v1' || !iv || !tag || ct === undefined) throw new Error('sealed value has an unknown format');
  const d = createDecipheriv('aes-256-gcm', aesKey(secret), Buffer.from(iv, 'base64url'));
  d.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([d.update(Buffer.from(ct, 'base64url')), d.final()]).toString('utf8');
}

export function constantTimeEqualHex(a: string, b: string): boolean {
  const ba = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}
