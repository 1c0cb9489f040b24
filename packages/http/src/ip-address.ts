import { isIPv4, isIPv6 } from 'node:net';

/** A parsed IP literal: IPv4 as an unsigned 32-bit number, IPv6 as 16 bytes. */
export type ParsedIp = { version: 4; value: number } | { version: 6; bytes: Uint8Array };

/**
 * Parses an IP literal in its canonical textual forms only. Anything `node:net` does not accept
 * (shorthand `127.1`, octal `0177.0.0.1`, hex or integer forms) is rejected, because a caller
 * that cannot say exactly which address it means must not be let through a public-address check.
 * IPv6 may come in URL brackets (`[::1]`) or with a zone id (`fe80::1%eth0`).
 */
export function parseIp(input: string): ParsedIp | null {
  if (isIPv4(input)) {
    const value = parseIPv4(input);
    return value === null ? null : { version: 4, value };
  }
  let text = input.startsWith('[') && input.endsWith(']') ? input.slice(1, -1) : input;
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  if (!isIPv6(text)) return null;
  const bytes = parseIPv6(text);
  return bytes === null ? null : { version: 6, bytes };
}

function parseIPv4(text: string): number | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    // Leading zeros read as octal in some resolvers (inet_aton), so they are ambiguous.
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

/** Expects text that `isIPv6` accepted; returns null on anything it cannot read fully. */
function parseIPv6(text: string): Uint8Array | null {
  const groups: number[] = [];
  let tail = text;
  // A trailing dotted IPv4 (`::ffff:1.2.3.4`) stands for the last two groups.
  const lastColon = tail.lastIndexOf(':');
  const maybeV4 = tail.slice(lastColon + 1);
  let v4: number | null = null;
  if (maybeV4.includes('.')) {
    v4 = parseIPv4(maybeV4);
    if (v4 === null) return null;
    tail = tail.slice(0, lastColon + 1) + '0:0';
  }
  const halves = tail.split('::');
  if (halves.length > 2) return null;
  const readGroups = (part: string): number[] | null => {
    if (part === '') return [];
    const out: number[] = [];
    for (const group of part.split(':')) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return null;
      out.push(parseInt(group, 16));
    }
    return out;
  };
  const head = readGroups(halves[0] ?? '');
  const rest = halves.length === 2 ? readGroups(halves[1] ?? '') : [];
  if (head === null || rest === null) return null;
  const missing = 8 - head.length - rest.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  groups.push(...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...rest);

  const bytes = new Uint8Array(16);
  groups.forEach((group, i) => {
    bytes[i * 2] = group >> 8;
    bytes[i * 2 + 1] = group & 0xff;
  });
  if (v4 !== null) {
    bytes[12] = (v4 >>> 24) & 0xff;
    bytes[13] = (v4 >>> 16) & 0xff;
    bytes[14] = (v4 >>> 8) & 0xff;
    bytes[15] = v4 & 0xff;
  }
  return bytes;
}

/** Reads 4 bytes of an IPv6 address, starting at `offset`, as an IPv4 number. */
export function embeddedIPv4(bytes: Uint8Array, offset: number): number {
  let value = 0;
  for (let i = offset; i < offset + 4; i++) value = value * 256 + (bytes[i] ?? 0);
  return value;
}

/** True when the first `prefixLength` bits of `bytes` equal those of `prefix`. */
export function hasPrefix(bytes: Uint8Array, prefix: Uint8Array, prefixLength: number): boolean {
  for (let bit = 0; bit < prefixLength; bit += 8) {
    const take = Math.min(8, prefixLength - bit);
    const mask = (0xff << (8 - take)) & 0xff;
    const i = bit / 8;
    if (((bytes[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}
