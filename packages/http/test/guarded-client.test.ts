import { createGuardedClient, type GuardedClient } from '../src';
import { loopbackTwoIsPublic, serversPerTest, type LoopbackServer } from './loopback-server';

// The guard is tested end to end on loopback only: 127.0.0.2 plays a public host, 127.0.0.1
// (and `localhost`) the internal network an attacker wants to reach.
const server = serversPerTest();

const guarded = createGuardedClient({ isAllowedAddress: loopbackTwoIsPublic });

async function codeOf(client: GuardedClient, url: string): Promise<string | undefined> {
  try {
    await client.get(url);
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  }
}

describe('createGuardedClient', () => {
  let internal: LoopbackServer;
  beforeEach(async () => {
    internal = await server((_req, res) => res.end('internal secrets'));
  });

  it('follows a redirect between allowed hosts', async () => {
    const second = await server((_req, res) => res.end('fine'), '127.0.0.2');
    const first = await server(
      (_req, res) => res.writeHead(302, { location: `${second.url}/b` }).end(),
      '127.0.0.2',
    );
    const response = await guarded.get(`${first.url}/a`);
    expect(response.body).toBe('fine');
    expect(response.redirectUrls.map(String)).toEqual([`${second.url}/b`]);
  });

  it.each([
    ['an IP literal', (port: number) => `http://127.0.0.1:${port}/`],
    ['a name resolving to loopback', (port: number) => `http://localhost:${port}/`],
    ['an IPv4-mapped IPv6 literal', (port: number) => `http://[::ffff:127.0.0.1]:${port}/`],
  ])('refuses a redirect to %s', async (_label, target) => {
    const redirector = await server(
      (_req, res) => res.writeHead(302, { location: target(internal.port) }).end(),
      '127.0.0.2',
    );
    expect(await codeOf(guarded, redirector.url)).toBe('ERR_HARK_ADDRESS_BLOCKED');
    expect(redirector.requests).toHaveLength(1);
    expect(internal.requests).toHaveLength(0);
  });

  it('refuses a redirect to a non-http scheme', async () => {
    const redirector = await server(
      (_req, res) => res.writeHead(302, { location: 'file:///etc/passwd' }).end(),
      '127.0.0.2',
    );
    expect(await codeOf(guarded, redirector.url)).toBeDefined();
    expect(internal.requests).toHaveLength(0);
  });

  it('refuses a name resolving to loopback at connect time, and allows it with allowPrivate', async () => {
    expect(await codeOf(guarded, `http://localhost:${internal.port}/`)).toBe('ERR_HARK_ADDRESS_BLOCKED');
    expect(internal.requests).toHaveLength(0);
    const dev = createGuardedClient({ allowPrivate: true });
    expect((await dev.get(`http://localhost:${internal.port}/`)).body).toBe('internal secrets');
  });

  it('stops after maxRedirects', async () => {
    const loop: LoopbackServer = await server(
      (_req, res) => res.writeHead(302, { location: loop.url }).end(),
      '127.0.0.2',
    );
    const client = createGuardedClient({ isAllowedAddress: loopbackTwoIsPublic, maxRedirects: 2 });
    expect(await codeOf(client, loop.url)).toBe('ERR_TOO_MANY_REDIRECTS');
    expect(loop.requests).toHaveLength(3);
  });

  it('sends its User-Agent and does not retry', async () => {
    const failing = await server((_req, res) => res.writeHead(503).end(), '127.0.0.2');
    const client = createGuardedClient({ isAllowedAddress: loopbackTwoIsPublic, userAgent: 'Hark/test' });
    expect(await codeOf(client, failing.url)).toBe('ERR_NON_2XX_3XX_RESPONSE');
    expect(failing.requests).toHaveLength(1);
    expect(failing.requests[0]?.headers['user-agent']).toBe('Hark/test');
  });
});
