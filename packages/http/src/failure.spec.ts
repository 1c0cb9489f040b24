import { classifyFailure, describeFailure } from './failure';

const withCode = (code: string) => Object.assign(new Error('x'), { code });

describe('classifyFailure', () => {
  it.each([
    ['ERR_HARK_ADDRESS_BLOCKED', 'blocked_address'],
    ['ETIMEDOUT', 'timeout'],
    ['ENOTFOUND', 'dns_failed'],
    ['EAI_AGAIN', 'dns_failed'],
    ['ECONNREFUSED', 'connection_refused'],
    ['EHOSTUNREACH', 'connection_refused'],
    ['ECONNRESET', 'connection_reset'],
    ['ERR_TOO_MANY_REDIRECTS', 'too_many_redirects'],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'tls_failed'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'tls_failed'],
    ['ERR_SSL_WRONG_VERSION_NUMBER', 'tls_failed'],
    ['EWHATEVER', 'request_failed'],
  ])('%s -> %s', (code, kind) => {
    expect(classifyFailure(withCode(code))).toBe(kind);
  });

  it('looks through a generic wrapper to the cause', () => {
    const wrapped = Object.assign(new Error('wrapped', { cause: withCode('ECONNREFUSED') }), {
      code: 'ERR_GOT_REQUEST_ERROR',
    });
    expect(classifyFailure(wrapped)).toBe('connection_refused');
  });

  it('copes with things that are not errors', () => {
    expect(classifyFailure(undefined)).toBe('request_failed');
    expect(classifyFailure('boom')).toBe('request_failed');
  });

  it('describes every kind without technical detail', () => {
    expect(describeFailure('timeout')).toBe('the server did not answer in time');
  });

  it('says the same of a name that resolves to a private address and one that does not resolve', () => {
    // Otherwise an audio URL's failure tells a caller which internal host names exist.
    expect(describeFailure('blocked_address')).toBe('the host did not resolve to a public address');
    expect(describeFailure('dns_failed')).toBe(describeFailure('blocked_address'));
  });
});
