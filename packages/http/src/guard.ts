import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import { parseIp } from './ip-address';
import { isPublicAddress } from './public-address';

/** Code carried by every refusal of the public-address guard (also on got's wrapping error). */
export const BLOCKED_CODE = 'ERR_HARK_ADDRESS_BLOCKED';

/**
 * Thrown (or passed to a lookup callback) when a request would reach a non-public address or use
 * a scheme other than http/https. The message names the host, never the resolved address, so it
 * can reach a log without mapping the operator's network.
 */
export class AddressBlockedError extends Error {
  override readonly name = 'AddressBlockedError';
  readonly code = BLOCKED_CODE;
}

/** Decides whether an IP literal may be reached; {@link isPublicAddress} outside tests. */
export type AddressPolicy = (ip: string) => boolean;

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/** The shape `net.connect` calls as `lookup`; `options.all` is set when autoSelectFamily is on. */
export type LookupFunction = (hostname: string, options: LookupOptions, callback: LookupCallback) => void;

type AllAddressesLookup = (
  hostname: string,
  options: LookupOptions & { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/**
 * Wraps a DNS lookup so that a connection can only be opened to public addresses. It runs inside
 * `net.connect`, after DNS and right before the socket connects, so a name that resolved to a
 * public address at create time and to 127.0.0.1 now (DNS rebinding) is still refused. Every
 * address of the answer must be public, not just the one that would be picked first.
 */
export function createGuardedLookup(
  base: AllAddressesLookup = dnsLookup,
  isAllowed: AddressPolicy = isPublicAddress,
): LookupFunction {
  return (hostname, options, callback) => {
    const opts: LookupOptions = typeof options === 'object' && options !== null ? options : {};
    base(hostname, { ...opts, all: true }, (error, addresses) => {
      if (error) {
        callback(error, opts.all ? [] : '');
        return;
      }
      const first = addresses[0];
      if (first === undefined || addresses.some((a) => !isAllowed(a.address))) {
        const blocked = new AddressBlockedError(`${hostname} resolves to a non-public address`);
        callback(blocked, opts.all ? [] : '');
        return;
      }
      if (opts.all) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

/**
 * Checks a request target before it is sent (and again on each redirect): http/https only, and an
 * IP-literal host must be public. `net.connect` skips the lookup for IP literals, so without this
 * check `http://127.0.0.1/` or a redirect to it would never meet the guarded lookup.
 */
export function assertAllowedTarget(url: URL, isAllowed: AddressPolicy = isPublicAddress): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AddressBlockedError(`scheme ${url.protocol} is not allowed`);
  }
  const host = url.hostname;
  const isLiteral = host.startsWith('[') || isIP(host) !== 0 || parseIp(host) !== null;
  if (isLiteral && !isAllowed(host)) {
    throw new AddressBlockedError(`${host} is not a public address`);
  }
}
