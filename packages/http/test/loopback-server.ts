import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';

export interface LoopbackServer {
  /** Base URL, e.g. `http://127.0.0.1:43121`. */
  url: string;
  port: number;
  /** Requests seen so far, in order. */
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders; body: string }>;
  close(): Promise<void>;
}

/**
 * A real HTTP server on a loopback address and an ephemeral port. The handler runs after the
 * request body was read. `close()` destroys open sockets too, so hanging handlers do not keep
 * jest alive.
 */
export async function startServer(
  handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void,
  host = '127.0.0.1',
): Promise<LoopbackServer> {
  const sockets = new Set<Socket>();
  const requests: LoopbackServer['requests'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface RawServer {
  url: string;
  /** Connections accepted so far. */
  connections: number;
  /** Connections the client has not closed yet. */
  open(): number;
  close(): Promise<void>;
}

/**
 * A TCP server that answers the first bytes of every connection with `reply`, raw, and then
 * keeps the socket open until the client closes it: for answers no well-behaved HTTP server
 * sends (a `101 Switching Protocols` nobody asked for).
 */
export async function startRawServer(reply: string): Promise<RawServer> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.once('data', () => socket.write(reply));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    open: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A `101 Switching Protocols` answer to a request that asked for no upgrade. */
export const UNASKED_UPGRADE =
  'HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n';

/** Treats 127.0.0.2 as public, so the guard can be tested end to end on loopback only. */
export const loopbackTwoIsPublic = (ip: string): boolean => ip === '127.0.0.2';

/** `startServer` for the tests of a file: the servers a test started are closed after it. */
export function serversPerTest(): typeof startServer {
  const open: LoopbackServer[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  return async (...args) => {
    const s = await startServer(...args);
    open.push(s);
    return s;
  };
}

/** Resolves once `predicate` holds; rejects after `timeoutMs`. */
export async function waitFor(predicate: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
