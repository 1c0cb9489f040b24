import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGuardedClient, DownloadError, downloadToFile } from '../src';
import { closedPort, serversPerTest, startRawServer, UNASKED_UPGRADE, waitFor } from './loopback-server';

const server = serversPerTest();
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hark-http-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const client = createGuardedClient({ allowPrivate: true, timeoutMs: 2_000 });
const MB = 1024 * 1024;

/** Runs a download expected to fail and returns its DownloadError. */
async function failure(promise: Promise<unknown>): Promise<DownloadError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof DownloadError)) throw new Error(`expected a DownloadError, got ${String(error)}`);
  return error;
}

describe('downloadToFile', () => {
  it('streams the body to the file and reports its size', async () => {
    const audio = Buffer.alloc(3 * MB, 7);
    const s = await server((_req, res) => res.end(audio));
    const dest = join(dir, 'a.bin');
    await expect(downloadToFile(client, `${s.url}/a.mp3`, dest, { maxBytes: 4 * MB })).resolves.toEqual({
      bytes: 3 * MB,
    });
    expect((await readFile(dest)).equals(audio)).toBe(true);
  });

  it('accepts a body of exactly maxBytes', async () => {
    const s = await server((_req, res) => res.end(Buffer.alloc(1000)));
    await expect(downloadToFile(client, s.url, join(dir, 'a'), { maxBytes: 1000 })).resolves.toEqual({
      bytes: 1000,
    });
  });

  it("a write that fails (a full disk) is not the URL's fault: the file system's error, not a DownloadError", async () => {
    const s = await server((_req, res) => res.end(Buffer.alloc(256 * 1024, 7)));
    // Every write to /dev/full fails with ENOSPC, as on a disk that filled up.
    const dest = join(dir, 'full.bin');
    await symlink('/dev/full', dest);
    const error = await downloadToFile(client, s.url, dest, { maxBytes: MB }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).not.toBeInstanceOf(DownloadError);
    expect(error).toMatchObject({ code: 'ENOSPC' });
    expect(existsSync(dest)).toBe(false);
  });

  it('follows redirects', async () => {
    const target = await server((_req, res) => res.end('audio'));
    const s = await server((_req, res) => res.writeHead(302, { location: `${target.url}/real.mp3` }).end());
    await expect(downloadToFile(client, s.url, join(dir, 'a'), { maxBytes: MB })).resolves.toEqual({
      bytes: 5,
    });
  });

  it('aborts a body that never ends as soon as it passes maxBytes, and removes the partial file', async () => {
    let sent = 0;
    let closed = false;
    const chunk = Buffer.alloc(64 * 1024, 1);
    const s = await server((_req, res) => {
      res.writeHead(200); // no content-length: the cap must be enforced while streaming
      res.on('close', () => (closed = true));
      const pump = (): void => {
        while (!closed) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      pump();
    });
    const dest = join(dir, 'big');
    const error = await failure(downloadToFile(client, s.url, dest, { maxBytes: MB }));
    expect(error).toMatchObject({
      code: 'audio_too_large',
      reason: 'too_large',
      message: `The audio is larger than ${MB} bytes`,
    });
    // Stopped within one chunk of the cap, not after reading the stream to the time-out.
    expect(error.bytesRead).toBeGreaterThan(MB);
    expect(error.bytesRead).toBeLessThanOrEqual(MB + chunk.length);
    expect(existsSync(dest)).toBe(false);
    // The connection was dropped: the server stops at the cap plus what socket buffers hold.
    await waitFor(() => closed);
    expect(sent).toBeLessThan(MB + 16 * MB);
  });

  it('refuses at once when Content-Length is over maxBytes', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200, { 'content-length': String(100 * MB) });
      res.write(Buffer.alloc(1024));
    });
    const error = await failure(downloadToFile(client, s.url, join(dir, 'a'), { maxBytes: MB }));
    expect(error).toMatchObject({ code: 'audio_too_large', bytesRead: 0 });
  });

  it.each([404, 500])('reports a %d answer as audio_unreachable', async (status) => {
    const s = await server((_req, res) => res.writeHead(status).end('nope'));
    const dest = join(dir, 'a');
    const error = await failure(downloadToFile(client, s.url, dest, { maxBytes: MB }));
    expect(error).toMatchObject({
      code: 'audio_unreachable',
      reason: 'http_status',
      message: `The audio URL answered with HTTP status ${status}`,
    });
    expect(existsSync(dest)).toBe(false);
  });

  it('does not treat a redirect it may not follow as audio', async () => {
    const noRedirects = createGuardedClient({ allowPrivate: true, followRedirects: false });
    const s = await server((_req, res) => res.writeHead(302, { location: '/elsewhere' }).end('moved'));
    const error = await failure(downloadToFile(noRedirects, s.url, join(dir, 'a'), { maxBytes: MB }));
    expect(error).toMatchObject({ code: 'audio_unreachable', reason: 'http_status' });
  });

  it('cuts a hanging server at the client time-out', async () => {
    const quick = createGuardedClient({ allowPrivate: true, timeoutMs: 500 });
    const s = await server((_req, res) => {
      res.writeHead(200);
      res.write('some bytes, then nothing');
    });
    const dest = join(dir, 'a');
    const started = Date.now();
    const error = await failure(downloadToFile(quick, s.url, dest, { maxBytes: MB }));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(error).toMatchObject({
      code: 'audio_unreachable',
      reason: 'timeout',
      message: 'The audio URL could not be fetched: the server did not answer in time',
    });
    expect(existsSync(dest)).toBe(false);
  });

  it('reports a refused connection', async () => {
    const port = await closedPort();
    const error = await failure(
      downloadToFile(client, `http://127.0.0.1:${port}/`, join(dir, 'a'), { maxBytes: MB }),
    );
    expect(error).toMatchObject({ code: 'audio_unreachable', reason: 'connection_refused' });
  });

  it('refuses loopback with the guard on, naming no address', async () => {
    const guarded = createGuardedClient();
    const s = await server((_req, res) => res.end('audio'));
    for (const url of [s.url, `http://localhost:${s.port}/`]) {
      const error = await failure(downloadToFile(guarded, url, join(dir, 'a'), { maxBytes: MB }));
      expect(error).toMatchObject({
        code: 'audio_unreachable',
        reason: 'blocked_address',
        message: 'The audio URL could not be fetched: the host did not resolve to a public address',
      });
    }
    expect(s.requests).toHaveLength(0);
  });

  it('fails a 101 answer nobody asked for at once, and closes its socket (it never hangs)', async () => {
    // got hands an upgraded socket over and then waits for a response that never comes: no
    // error, and its time-out never fires; the worker's one job slot was held for good.
    const raw = await startRawServer(UNASKED_UPGRADE);
    try {
      const dest = join(dir, 'a');
      const started = Date.now();
      const error = await failure(downloadToFile(client, raw.url, dest, { maxBytes: MB }));
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(error).toMatchObject({
        code: 'audio_unreachable',
        reason: 'request_failed',
        message: 'The audio URL could not be fetched: the request failed',
      });
      expect(existsSync(dest)).toBe(false);
      await waitFor(() => raw.open() === 0);
    } finally {
      await raw.close();
    }
  });

  it('rejects with the abort reason when cancelled, and removes the partial file', async () => {
    const s = await server((_req, res) => {
      res.writeHead(200);
      res.write(Buffer.alloc(1024));
    });
    const controller = new AbortController();
    const dest = join(dir, 'a');
    const pending = downloadToFile(client, s.url, dest, { maxBytes: MB, signal: controller.signal });
    setTimeout(() => controller.abort(new Error('transcript canceled')), 100);
    await expect(pending).rejects.toThrow('transcript canceled');
    expect(existsSync(dest)).toBe(false);
  });
});
