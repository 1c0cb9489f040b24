import { embeddedIPv4, hasPrefix, parseIp } from './ip-address';

// IPv4 ranges that are not reachable on the public internet, or that reach the operator's own
// network (IANA special-purpose registry, RFC 6890 and successors). Globally reachable anycast
// blocks in the registry (AS112 192.31.196/24, AMT 192.52.193/24) are left public on purpose.
const NON_PUBLIC_V4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network", includes the unspecified 0.0.0.0
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, where cloud metadata services live
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1 documentation
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes broadcast 255.255.255.255
];

const V4_RANGES = NON_PUBLIC_V4.map(([base, length]) => {
  const parsed = parseIp(base);
  if (parsed?.version !== 4) throw new Error(`bad range ${base}`);
  const mask = length === 0 ? 0 : (0xffffffff << (32 - length)) >>> 0;
  return { base: parsed.value, mask };
});

function v6Prefix(text: string): Uint8Array {
  const parsed = parseIp(text);
  if (parsed?.version !== 6) throw new Error(`bad prefix ${text}`);
  return parsed.bytes;
}

// IPv6 is judged the other way round: only global unicast (2000::/3) can be public, which shuts
// out loopback, unspecified, ULA fc00::/7, link-local fe80::/10, site-local, multicast ff00::/8,
// discard 100::/64, SRv6 5f00::/16 and whatever is allocated next outside 2000::/3. The
// exceptions are the forms that embed an IPv4 address, judged by that address.
const GLOBAL_UNICAST = v6Prefix('2000::');
const MAPPED = v6Prefix('::ffff:0:0'); // ::ffff:a.b.c.d, IPv4-mapped
const NAT64 = v6Prefix('64:ff9b::'); // well-known NAT64 prefix, RFC 6052
const SIX_TO_FOUR = v6Prefix('2002::'); // 6to4, v4 in bits 16-47
const NON_PUBLIC_GLOBAL_V6: ReadonlyArray<readonly [Uint8Array, number]> = [
  [v6Prefix('2001::'), 23], // IETF protocol assignments: Teredo, benchmarking 2001:2::/48, ORCHID
  [v6Prefix('2001:db8::'), 32], // documentation
  [v6Prefix('3fff::'), 20], // documentation, RFC 9637
];

function isPublicV4(value: number): boolean {
  return !V4_RANGES.some(({ base, mask }) => (value & mask) >>> 0 === base);
}

function isPublicV6(bytes: Uint8Array): boolean {
  if (hasPrefix(bytes, MAPPED, 96) || hasPrefix(bytes, NAT64, 96)) {
    return isPublicV4(embeddedIPv4(bytes, 12));
  }
  if (!hasPrefix(bytes, GLOBAL_UNICAST, 3)) return false;
  if (hasPrefix(bytes, SIX_TO_FOUR, 16)) return isPublicV4(embeddedIPv4(bytes, 2));
  return !NON_PUBLIC_GLOBAL_V6.some(([prefix, length]) => hasPrefix(bytes, prefix, length));
}

/**
 * True only for an IP literal that is safe to connect to on behalf of a caller: a globally
 * routable unicast address. Loopback, private, link-local, CGNAT, multicast, unspecified,
 * broadcast, documentation, benchmarking and reserved ranges are refused, as are IPv6 forms that
 * wrap one of those IPv4 addresses (IPv4-mapped, NAT64 64:ff9b::/96, 6to4 2002::/16).
 * Anything that is not a canonical IP literal (a hostname, `127.1`, `0x7f000001`) is false.
 */
export function isPublicAddress(ip: string): boolean {
  const parsed = parseIp(ip);
  if (parsed === null) return false;
  return parsed.version === 4 ? isPublicV4(parsed.value) : isPublicV6(parsed.bytes);
}
