// The one implementation of webhook verification. It lives in the SDK because the SDK must not load
// other @hark packages at run time; @hark/webhooks (the signing side) re-exports it from the
// `@hark/sdk/signature` subpath, and its signature.spec.ts checks that the notices it signs verify.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Header carrying the signature on every notice (`req.headers['hark-signature']` in node:http). */
export const SIGNATURE_HEADER = 'Hark-Signature';

/** Default accepted clock difference between sender and receiver, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

// Bounds the work one forged header can cause.
const MAX_HEADER_LENGTH = 4096;
const MAX_SIGNATURES = 8;

export interface VerifySignatureOptions {
  /** Largest accepted difference between the header's `t` and now, either way, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The receiver's clock. Default `new Date()`. */
  now?: Date;
}

/** A parsed `Hark-Signature` value: one timestamp and one or more v1 signatures. */
export interface ParsedSignature {
  t: number;
  v1: string[];
}

/**
 * Parses a signature header strictly: comma-separated `key=value` pairs with no spaces, exactly
 * one `t` (decimal digits), one or more `v1` (64 lowercase hex digits each; several appear while
 * a key is being rotated). Other keys are ignored, so a future `v2` does not break old receivers.
 * Returns null for anything else.
 */
export function parseSignatureHeader(header: string): ParsedSignature | null {
  if (header.length === 0 || header.length > MAX_HEADER_LENGTH) return null;
  let t: number | null = null;
  const v1: string[] = [];
  for (const pair of header.split(',')) {
    const eq = pair.indexOf('=');
    if (eq <= 0) return null;
    const key = pair.slice(0, eq);
    const value = pair.slice(eq + 1);
    if (!/^[a-z0-9]+$/.test(key)) return null;
    if (key === 't') {
      if (t !== null || !/^\d{1,15}$/.test(value)) return null;
      t = Number(value);
    } else if (key === 'v1') {
      if (!/^[0-9a-f]{64}$/.test(value)) return null;
      v1.push(value);
    } else if (!/^[\x21-\x7e]*$/.test(value)) {
      return null; // other schemes (a future v2) are skipped, garbage is not
    }
  }
  if (t === null || v1.length === 0 || v1.length > MAX_SIGNATURES) return null;
  return { t, v1 };
}

/**
 * Checks a webhook notice: recomputes HMAC-SHA256 over `<t>.<raw body>`, keyed with the lowercase
 * hex SHA-256 of the API key that created the transcript, compares in constant time, and refuses
 * a `t` further than `toleranceSeconds` from now, so a captured notice cannot be replayed later.
 *
 * Pass the body exactly as received (bytes or their UTF-8 string), before any JSON parsing.
 * `header` takes the `Hark-Signature` value as node:http or Express give it.
 */
export function verifySignature(
  rawBody: string | Uint8Array,
  header: string | string[] | null | undefined,
  apiKey: string,
  options: VerifySignatureOptions = {},
): boolean {
  const { toleranceSeconds = DEFAULT_TOLERANCE_SECONDS, now = new Date() } = options;
  if (typeof header !== 'string') return false; // absent, or sent twice
  const parsed = parseSignatureHeader(header);
  if (parsed === null) return false;
  // Written so that it fails closed: a tolerance or a clock that is not a number (NaN from an
  // unset environment variable, an invalid Date) refuses every notice instead of none.
  const skew = Math.abs(Math.floor(now.getTime() / 1000) - parsed.t);
  if (!(skew <= toleranceSeconds)) return false;

  // The key is the hex string itself as UTF-8 bytes, as the service signs.
  const secret = createHash('sha256').update(apiKey, 'utf8').digest('hex');
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${parsed.t}.`, 'utf8');
  const expected = Buffer.from(
    (typeof rawBody === 'string' ? mac.update(rawBody, 'utf8') : mac.update(rawBody)).digest('hex'),
    'utf8',
  );
  let matched = false;
  for (const candidate of parsed.v1) {
    const given = Buffer.from(candidate, 'utf8');
    // Every entry is compared (no early exit); equal lengths are guaranteed by the parser, and
    // checked so timingSafeEqual cannot throw.
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  return matched;
}
