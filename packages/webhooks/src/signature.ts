// Signing, as the dispatcher does it. Verification is re-exported from the SDK at the end.
import { createHash, createHmac } from 'node:crypto';

/** Header carrying the signature on every notice. */
export const SIGNATURE_HEADER = 'Hark-Signature';

/**
 * The webhook signing secret of an API key: the lowercase hex SHA-256 of the key. Anyone holding
 * it can forge notices, so the service stores it only encrypted (see decisions, Accounts and keys).
 */
export function signingSecretFromApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

function hmacHex(rawBody: string, secretHex: string, t: number): string {
  // The key is the hex string itself, as UTF-8 bytes, not the 32 bytes it encodes: that is how
  // "keyed with the lowercase hex SHA-256 of the API key" reads, and what receivers will compute.
  return createHmac('sha256', Buffer.from(secretHex, 'utf8')).update(`${t}.${rawBody}`, 'utf8').digest('hex');
}

/**
 * The `Hark-Signature` header value for `rawBody`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<rawBody>">`. `t` defaults to now.
 */
export function signPayload(
  rawBody: string,
  secretHex: string,
  t: number = Math.floor(Date.now() / 1000),
): string {
  if (!Number.isSafeInteger(t) || t < 0) throw new RangeError('t must be a non-negative integer of seconds');
  return `t=${t},v1=${hmacHex(rawBody, secretHex, t)}`;
}

// Verification (what receivers run) has one implementation, in the SDK, which loads nothing but
// node:crypto; the service's own tests verify through it too.
export {
  DEFAULT_TOLERANCE_SECONDS,
  type ParsedSignature,
  parseSignatureHeader,
  verifySignature,
  type VerifySignatureOptions as VerifyOptions,
} from '@hark/sdk/signature';
