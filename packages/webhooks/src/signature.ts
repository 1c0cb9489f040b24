// Only node:crypto here: the SDK re-exports verifySignature for receivers, so this file must not
// pull in anything else from the monorepo.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Header carrying the signature on every notice. */
export const SIGNATURE_HEADER = 'Hark-Signature';

/** Default accepted clock difference between sender and receiver, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

// Bounds the work an attacker can make a receiver do with one forged header.
const MAX_HEADER_LENGTH = 4096;
const MAX_SIGNATURES = 8;

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
      return null;
    }
  }
  if (t === null || v1.length === 0 || v1.length > MAX_SIGNATURES) return null;
  return { t, v1 };
}

export interface VerifyOptions {
  /** Largest accepted difference between `t` and now, either way, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The receiver's clock. Default `new Date()`. */
  now?: Date;
}

/**
 * Checks a notice as a receiver should: recompute the HMAC over the raw body exactly as received
 * (before any JSON parsing), compare in constant time, and refuse a `t` outside the tolerance so a
 * captured notice cannot be replayed later. True when any `v1` entry matches.
 */
export function verifySignature(
  rawBody: string,
  header: string,
  apiKey: string,
  options: VerifyOptions = {},
): boolean {
  const { toleranceSeconds = DEFAULT_TOLERANCE_SECONDS, now = new Date() } = options;
  const parsed = parseSignatureHeader(header);
  if (parsed === null) return false;
  const nowSeconds = Math.floor(now.getTime() / 1000);
  if (Math.abs(nowSeconds - parsed.t) > toleranceSeconds) return false;

  const expected = Buffer.from(hmacHex(rawBody, signingSecretFromApiKey(apiKey), parsed.t), 'utf8');
  let matched = false;
  for (const candidate of parsed.v1) {
    const given = Buffer.from(candidate, 'utf8');
    // Every entry is compared (no early exit), and lengths are equal by the parser's 64-hex rule;
    // the length check stays so timingSafeEqual can never throw.
    if (given.length === expected.length && timingSafeEqual(given, expected)) matched = true;
  }
  return matched;
}
