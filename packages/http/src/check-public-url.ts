import { lookup } from 'node:dns/promises';
import { assertAllowedTarget } from './guard';
import { isPublicAddress } from './public-address';
import { withTimeout } from './with-timeout';

/** Why a URL was refused; the API maps any of them to `webhook_url_invalid`. */
export type UrlRefusal =
  | 'invalid_url'
  | 'unsupported_scheme'
  | 'credentials_not_allowed'
  | 'non_public_address'
  | 'dns_failed';

export type UrlCheckResult = { ok: true } | { ok: false; reason: UrlRefusal };

export interface CheckPublicUrlOptions {
  /** Skip the address checks (and DNS) entirely: operator setting `ALLOW_PRIVATE_URLS`. Default `false`. */
  allowPrivate?: boolean;
  /** Resolves a host name to all its addresses. Default: `dns.lookup` with `all: true`. */
  resolve?: (hostname: string) => Promise<string[]>;
  /** Longest wait for DNS before refusing with `dns_failed`, in ms. Default 5 000. */
  dnsTimeoutMs?: number;
}

const defaultResolve = async (hostname: string): Promise<string[]> =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/**
 * The checks that need no network: an absolute http(s) URL with a host and without credentials.
 * Credentials (`https://user:pass@host/`) are refused: a caller's URL is echoed back in
 * transcripts, webhook bodies and delivery records and stored as given, so a password in it
 * would be shown and kept in plain text. Used for the audio `url` (whose addresses are checked
 * when it is fetched) and, inside {@link checkPublicUrl}, for `webhookUrl`.
 */
/** `scheme://`, then no white space or control character anywhere. */
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const WRITTEN_AS_URL = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s\u0000-\u001F\u007F-\u009F]*$/u;

export function checkUrlShape(url: string): UrlCheckResult {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: 'invalid_url' };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    return { ok: false, reason: 'unsupported_scheme' };
  // As written, not as the WHATWG parser repairs it (it drops white space and tabs, and takes
  // `http:host` or `http:\\host` for `http://host`): what is stored and shown is what was sent.
  if (!WRITTEN_AS_URL.test(url)) return { ok: false, reason: 'invalid_url' };
  if (parsed.hostname === '') return { ok: false, reason: 'invalid_url' };
  if (parsed.username !== '' || parsed.password !== '')
    return { ok: false, reason: 'credentials_not_allowed' };
  return { ok: true };
}

/**
 * Create-time validation of a caller-supplied URL (`webhookUrl`). Only http and https, no
 * credentials, and every address the host resolves to must be public (an IP literal is checked
 * without DNS). This is an early, friendly refusal only: DNS can change before the request is sent,
 * so the guarded client checks again at connect time.
 *
 * A name that does not resolve is refused (`dns_failed`); callers that would rather accept it
 * and let delivery fail can treat that reason as success.
 */
export async function checkPublicUrl(
  url: string,
  options: CheckPublicUrlOptions = {},
): Promise<UrlCheckResult> {
  const { allowPrivate = false, resolve = defaultResolve, dnsTimeoutMs = 5_000 } = options;
  const shape = checkUrlShape(url);
  if (!shape.ok || allowPrivate) return shape;
  const parsed = new URL(url);

  try {
    assertAllowedTarget(parsed); // IP literals, no DNS
  } catch {
    return { ok: false, reason: 'non_public_address' };
  }
  if (parsed.hostname.startsWith('[') || isPublicAddress(parsed.hostname)) return { ok: true };

  let addresses: string[];
  try {
    addresses = await withTimeout(resolve(parsed.hostname), dnsTimeoutMs, 'DNS lookup');
  } catch {
    return { ok: false, reason: 'dns_failed' };
  }
  if (addresses.length === 0) return { ok: false, reason: 'dns_failed' };
  return addresses.every(isPublicAddress) ? { ok: true } : { ok: false, reason: 'non_public_address' };
}
