import { checkPublicUrl, checkUrlShape } from './check-public-url';

/** A fake resolver: tests never reach real DNS. */
function resolverFor(table: Record<string, string[]>): {
  resolve: (host: string) => Promise<string[]>;
  asked: string[];
} {
  const asked: string[] = [];
  return {
    asked,
    resolve: async (host) => {
      asked.push(host);
      const found = table[host];
      if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return found;
    },
  };
}

describe('checkPublicUrl', () => {
  const dns = resolverFor({
    'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'internal.example.com': ['10.1.2.3'],
    'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
    'mapped.example.com': ['::ffff:169.254.169.254'],
    'empty.example.com': [],
  });
  const check = (url: string) => checkPublicUrl(url, { resolve: dns.resolve });

  it('accepts an http(s) URL whose host resolves only to public addresses', async () => {
    await expect(check('https://hooks.example.com/hark?x=1')).resolves.toEqual({ ok: true });
    await expect(check('http://hooks.example.com:8080/')).resolves.toEqual({ ok: true });
  });

  it.each([
    ['not a url', 'invalid_url'],
    ['/relative/path', 'invalid_url'],
    ['ftp://hooks.example.com/', 'unsupported_scheme'],
    ['file:///etc/passwd', 'unsupported_scheme'],
    ['gopher://hooks.example.com/', 'unsupported_scheme'],
    ['javascript:alert(1)', 'unsupported_scheme'],
    ['https://user:pass@hooks.example.com/', 'credentials_not_allowed'],
    ['https://user@hooks.example.com/', 'credentials_not_allowed'],
    ['https://internal.example.com/', 'non_public_address'],
    ['https://mixed.example.com/', 'non_public_address'],
    ['https://mapped.example.com/', 'non_public_address'],
    ['https://nowhere.example.com/', 'dns_failed'],
    ['https://empty.example.com/', 'dns_failed'],
  ])('refuses %s (%s)', async (url, reason) => {
    await expect(check(url)).resolves.toEqual({ ok: false, reason });
  });

  it.each([
    'http://127.0.0.1/',
    'http://10.0.0.1:8080/x',
    'http://169.254.169.254/latest/meta-data/',
    'http://0x7f.1/', // the URL parser normalises this to 127.0.0.1
    'http://2130706433/',
    'http://[::1]/',
    'http://[::ffff:127.0.0.1]/',
    'http://[fd00::1]/',
    'http://0.0.0.0/',
  ])('refuses the IP literal %s without asking DNS', async (url) => {
    const before = dns.asked.length;
    await expect(check(url)).resolves.toEqual({ ok: false, reason: 'non_public_address' });
    expect(dns.asked.length).toBe(before);
  });

  it('accepts a public IP literal without asking DNS', async () => {
    const before = dns.asked.length;
    await expect(check('https://93.184.216.34/')).resolves.toEqual({ ok: true });
    await expect(check('https://[2606:4700:4700::1111]/')).resolves.toEqual({ ok: true });
    expect(dns.asked.length).toBe(before);
  });

  it('skips address checks and DNS with allowPrivate, but still checks scheme and credentials', async () => {
    const opts = { allowPrivate: true, resolve: dns.resolve };
    const before = dns.asked.length;
    await expect(checkPublicUrl('http://127.0.0.1:3000/hook', opts)).resolves.toEqual({ ok: true });
    await expect(checkPublicUrl('http://internal.example.com/', opts)).resolves.toEqual({ ok: true });
    await expect(checkPublicUrl('http://receiver:3000/', opts)).resolves.toEqual({ ok: true });
    expect(dns.asked.length).toBe(before);
    await expect(checkPublicUrl('ftp://127.0.0.1/', opts)).resolves.toEqual({
      ok: false,
      reason: 'unsupported_scheme',
    });
    await expect(checkPublicUrl('http://a:b@127.0.0.1/', opts)).resolves.toEqual({
      ok: false,
      reason: 'credentials_not_allowed',
    });
  });

  it('refuses with dns_failed when DNS does not answer in time', async () => {
    const never = () => new Promise<string[]>(() => undefined);
    await expect(
      checkPublicUrl('https://slow.example.com/', { resolve: never, dnsTimeoutMs: 20 }),
    ).resolves.toEqual({
      ok: false,
      reason: 'dns_failed',
    });
  });
});

describe('checkUrlShape', () => {
  it.each([
    ['https://e.com/a.wav', { ok: true }],
    ['http://10.0.0.1/a.wav', { ok: true }], // addresses are not its concern
    ['https://user:pass@e.com/a.wav', { ok: false, reason: 'credentials_not_allowed' }],
    ['https://user@e.com/a.wav', { ok: false, reason: 'credentials_not_allowed' }],
    ['https://:pw@e.com/a.wav', { ok: false, reason: 'credentials_not_allowed' }],
    ['ftp://e.com/a.wav', { ok: false, reason: 'unsupported_scheme' }],
    ['e.com/a.wav', { ok: false, reason: 'invalid_url' }],
    ['HTTPS://E.com/a.wav', { ok: true }],
    // Forms the WHATWG parser repairs silently: the URL stored (and echoed in delivery records)
    // would not be the one requested. White space and control characters anywhere, and a scheme
    // without its `//`, are refused.
    [' https://e.com/a.wav', { ok: false, reason: 'invalid_url' }],
    ['https://e.com/a.wav\n', { ok: false, reason: 'invalid_url' }],
    ['https://e.com/a b.wav', { ok: false, reason: 'invalid_url' }],
    ['https://e.c\tom/a.wav', { ok: false, reason: 'invalid_url' }],
    ['https://e.com/\u0085a.wav', { ok: false, reason: 'invalid_url' }],
    ['http:/e.com/a.wav', { ok: false, reason: 'invalid_url' }],
    ['http:e.com/a.wav', { ok: false, reason: 'invalid_url' }],
    ['http:\\\\e.com/a.wav', { ok: false, reason: 'invalid_url' }],
  ])('%s', (url, result) => {
    expect(checkUrlShape(url)).toEqual(result);
  });
});
