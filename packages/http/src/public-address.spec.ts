import { isPublicAddress } from './public-address';
import { parseIp } from './ip-address';

describe('isPublicAddress', () => {
  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '9.255.255.255', // just below 10/8
    '11.0.0.0', // just above 10/8
    '100.63.255.255', // just below CGNAT
    '100.128.0.0', // just above CGNAT
    '172.15.255.255',
    '172.32.0.0',
    '169.253.255.255',
    '192.0.1.1',
    '192.0.3.1',
    '192.167.255.255',
    '192.169.0.0',
    '198.17.255.255',
    '198.20.0.0',
    '223.255.255.255', // last address before multicast
    '192.31.196.1', // AS112, globally reachable
    '2606:4700:4700::1111',
    '2001:4860:4860::8888',
    '2a00:1450:4001:80b::200e',
    '2001:200::1', // first block past 2001::/23
    '::ffff:8.8.8.8',
    '::ffff:808:808',
    '64:ff9b::8.8.8.8',
    '2002:0808:0808::1', // 6to4 wrapping 8.8.8.8
    '[2606:4700:4700::1111]', // as URL hostnames carry it
  ])('%s is public', (ip) => {
    expect(isPublicAddress(ip)).toBe(true);
  });

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback range'],
    ['10.0.0.1', 'private 10/8'],
    ['10.255.255.255', 'private 10/8 end'],
    ['172.16.0.1', 'private 172.16/12'],
    ['172.31.255.255', 'private 172.16/12 end'],
    ['192.168.1.1', 'private 192.168/16'],
    ['169.254.169.254', 'link-local metadata'],
    ['100.64.0.1', 'CGNAT'],
    ['100.127.255.255', 'CGNAT end'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'this network'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast SSDP'],
    ['240.0.0.1', 'reserved 240/4'],
    ['192.0.0.8', 'IETF protocol assignments'],
    ['192.0.2.1', 'TEST-NET-1'],
    ['198.51.100.7', 'TEST-NET-2'],
    ['203.0.113.9', 'TEST-NET-3'],
    ['198.18.0.1', 'benchmarking'],
    ['198.19.255.255', 'benchmarking end'],
    ['192.88.99.1', '6to4 relay anycast'],
    ['::', 'IPv6 unspecified'],
    ['::1', 'IPv6 loopback'],
    ['0:0:0:0:0:0:0:1', 'IPv6 loopback long form'],
    ['fe80::1', 'IPv6 link-local'],
    ['fe80::1%eth0', 'IPv6 link-local with zone'],
    ['febf:ffff::1', 'IPv6 link-local end'],
    ['fec0::1', 'IPv6 site-local'],
    ['fc00::1', 'ULA fc00::/7'],
    ['fd12:3456:789a::1', 'ULA fd00::/8'],
    ['ff02::1', 'IPv6 multicast'],
    ['100::1', 'discard-only'],
    ['5f00::1', 'SRv6 SIDs'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex form'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['0:0:0:0:0:ffff:c0a8:0101', 'IPv4-mapped private, long form'],
    ['::127.0.0.1', 'IPv4-compatible (deprecated)'],
    ['::8.8.8.8', 'IPv4-compatible even of a public address'],
    ['64:ff9b::127.0.0.1', 'NAT64 of loopback'],
    ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
    ['64:ff9b:1::8.8.8.8', 'local-use NAT64'],
    ['2002:7f00:0001::1', '6to4 of loopback'],
    ['2002:c0a8:0101::', '6to4 of 192.168.1.1'],
    ['2002:a9fe:a9fe::1', '6to4 of metadata'],
    ['2001::1', 'Teredo'],
    ['2001:2::1', 'IPv6 benchmarking'],
    ['2001:db8::1', 'IPv6 documentation'],
    ['3fff::1', 'IPv6 documentation 3fff::/20'],
    ['[::1]', 'bracketed loopback'],
  ])('%s is not public (%s)', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });

  it.each([
    'localhost',
    'example.com',
    '',
    '127.1', // shorthand that inet_aton reads as 127.0.0.1
    '0177.0.0.1', // octal
    '0x7f.0.0.1',
    '2130706433', // integer form of 127.0.0.1
    '08.8.8.8', // leading zero
    '256.1.1.1',
    '1.2.3',
    '1.2.3.4.5',
    ':::1',
    '1::2::3',
    'gggg::1',
    '[8.8.8.8]',
    ' ',
  ])('%j is not an IP literal, so not public', (input) => {
    expect(isPublicAddress(input)).toBe(false);
  });
});

describe('parseIp', () => {
  const hex = (ip: string): string => {
    const parsed = parseIp(ip);
    if (parsed?.version !== 6) throw new Error('not v6');
    return Buffer.from(parsed.bytes).toString('hex');
  };

  it('expands :: in every position', () => {
    expect(hex('::')).toBe('0'.repeat(32));
    expect(hex('::1')).toBe('0'.repeat(31) + '1');
    expect(hex('1::')).toBe('0001' + '0'.repeat(28));
    expect(hex('1:2::7:8')).toBe('00010002000000000000000000070008');
    expect(hex('1:2:3:4:5:6:7:8')).toBe('00010002000300040005000600070008');
  });

  it('reads a trailing dotted IPv4 into the last 32 bits', () => {
    expect(hex('::ffff:192.168.1.1')).toBe('00000000000000000000ffffc0a80101');
    expect(hex('1:2:3:4:5:6:1.2.3.4')).toBe('00010002000300040005000601020304');
  });

  it('reads IPv4 as an unsigned number', () => {
    expect(parseIp('255.255.255.255')).toEqual({ version: 4, value: 0xffffffff });
    expect(parseIp('0.0.0.0')).toEqual({ version: 4, value: 0 });
  });
});
