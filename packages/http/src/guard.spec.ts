import type { LookupAddress, LookupOptions } from 'node:dns';
import { AddressBlockedError, assertAllowedTarget, createGuardedLookup } from './guard';

type Answer = { error: NodeJS.ErrnoException | null; addresses: LookupAddress[] };

/** Calls the guarded lookup the way net.connect does, over a fake DNS answer. */
function lookupWith(answer: Answer, options: LookupOptions) {
  const seen: LookupOptions[] = [];
  const lookup = createGuardedLookup((_host, opts, cb) => {
    seen.push(opts);
    cb(answer.error, answer.addresses);
  });
  return new Promise<{
    error: NodeJS.ErrnoException | null;
    address: unknown;
    family?: number;
    seen: LookupOptions[];
  }>((resolve) =>
    lookup('host.test', options, (error, address, family) => resolve({ error, address, family, seen })),
  );
}

const v4 = (address: string): LookupAddress => ({ address, family: 4 });
const v6 = (address: string): LookupAddress => ({ address, family: 6 });

describe('createGuardedLookup', () => {
  it('passes a public answer through, single-address form', async () => {
    const result = await lookupWith(
      { error: null, addresses: [v4('93.184.216.34'), v6('2606:4700::1')] },
      {},
    );
    expect(result.error).toBeNull();
    expect(result.address).toBe('93.184.216.34');
    expect(result.family).toBe(4);
    expect(result.seen[0]?.all).toBe(true); // always asks for every address
  });

  it('passes a public answer through, all-addresses form (autoSelectFamily)', async () => {
    const addresses = [v4('93.184.216.34'), v6('2606:4700::1')];
    const result = await lookupWith({ error: null, addresses }, { all: true });
    expect(result.error).toBeNull();
    expect(result.address).toEqual(addresses);
  });

  it.each([
    [[v4('127.0.0.1')]],
    [[v4('93.184.216.34'), v4('10.0.0.5')]], // one bad address is enough
    [[v6('::1')]],
    [[v6('::ffff:169.254.169.254')]],
    [[]],
  ])('refuses %j', async (addresses) => {
    for (const options of [{}, { all: true }]) {
      const result = await lookupWith({ error: null, addresses }, options);
      expect(result.error).toBeInstanceOf(AddressBlockedError);
      expect(result.error?.code).toBe('ERR_HARK_ADDRESS_BLOCKED');
      expect(result.error?.message).toBe('host.test resolves to a non-public address');
    }
  });

  it('passes DNS errors through unchanged', async () => {
    const dnsError = Object.assign(new Error('getaddrinfo ENOTFOUND host.test'), { code: 'ENOTFOUND' });
    const result = await lookupWith({ error: dnsError, addresses: [] }, {});
    expect(result.error).toBe(dnsError);
  });
});

describe('assertAllowedTarget', () => {
  it.each([
    'https://example.com/',
    'http://93.184.216.34:8080/',
    'http://[2606:4700::1]/',
    'http://localhost/',
  ])('lets %s through (host names are checked at connect time)', (url) => {
    expect(() => assertAllowedTarget(new URL(url))).not.toThrow();
  });

  it.each([
    'http://127.0.0.1/',
    'http://[::1]/',
    'http://[::ffff:a00:1]/',
    'http://0x7f.1/',
    'ftp://example.com/',
    'file:///etc/passwd',
  ])('refuses %s', (url) => {
    expect(() => assertAllowedTarget(new URL(url))).toThrow(AddressBlockedError);
  });
});
