import { metricsRefusal } from './access';

const req = (remoteAddress: string, headers: Record<string, string> = {}) => ({
  headers,
  socket: { remoteAddress },
});
const TOKEN = 'scrape-token-0123456789';

describe('metricsRefusal', () => {
  it.each(['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1'])(
    'no token: a direct loopback client (%s) may read',
    (ip) => {
      expect(metricsRefusal(req(ip), undefined)).toBeNull();
    },
  );

  it.each([
    ['another host', req('192.0.2.7')],
    ['an IPv6 host', req('2001:db8::1')],
    ['a mapped outside address', req('::ffff:192.0.2.7')],
    ['a relayed request (X-Forwarded-For)', req('127.0.0.1', { 'x-forwarded-for': '192.0.2.7' })],
    ['a relayed request (Forwarded)', req('127.0.0.1', { forwarded: 'for=192.0.2.7' })],
    ['a relayed request (X-Real-IP)', req('::1', { 'x-real-ip': '192.0.2.7' })],
    ['an unknown peer', req('')],
  ])('no token: %s is refused', (_label, r) => {
    expect(metricsRefusal(r, undefined)).toMatch(/HARK_METRICS_TOKEN/);
  });

  it('with a token: the token from anywhere, never without it (not even from loopback)', () => {
    expect(metricsRefusal(req('192.0.2.7', { authorization: `Bearer ${TOKEN}` }), TOKEN)).toBeNull();
    expect(metricsRefusal(req('192.0.2.7', { authorization: `bearer ${TOKEN}` }), TOKEN)).toBeNull();
    expect(metricsRefusal(req('127.0.0.1'), TOKEN)).toMatch(/token is missing or invalid/);
    expect(metricsRefusal(req('127.0.0.1', { authorization: 'Bearer wrong' }), TOKEN)).toMatch(/invalid/);
  });
});
