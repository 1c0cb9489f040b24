import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type AccountOptions, stackTest } from '@hark/testing/jest';
import { type TestAccount, testAudio } from '@hark/testing';

export const JFK = testAudio.jfkWav;
export const SDK_ROOT = path.resolve(__dirname, '..');

export interface SdkStack {
  /** The service root, as users pass it to `new Hark({ baseUrl })`. */
  readonly baseUrl: string;
  /** An account with a key (topped up with 1000 credits unless `opts` say otherwise). */
  account(opts?: AccountOptions): Promise<TestAccount>;
}

/**
 * The service as operators run it, for the block it is called in (`@hark/testing/jest`
 * `stackTest`): the built API, worker and webhook dispatcher as real processes on real Postgres
 * and Redis, ffmpeg and whisper-cli with the test model (which transcribes to empty text).
 * `name` keeps the Redis prefix apart from other files run by the same jest worker.
 */
export function sdkStack(name: string): SdkStack {
  // Webhook receivers of these tests listen on 127.0.0.1.
  const stack = stackTest({ name, dispatcher: true, env: () => ({ ALLOW_PRIVATE_URLS: 'true' }) });
  return {
    get baseUrl() {
      return `http://127.0.0.1:${stack.api.port}`;
    },
    account: (opts = { toppedUp: true, credits: 1000 }) => stack.newAccount(opts),
  };
}

export interface Notice {
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
}

/** A webhook receiver on 127.0.0.1 that records raw bodies and answers 204. */
export async function startReceiver(): Promise<{
  url: string;
  notices: Notice[];
  next(n: number, timeoutMs?: number): Promise<Notice[]>;
  close(): Promise<void>;
}> {
  const notices: Notice[] = [];
  const waiters: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      notices.push({ headers: req.headers, raw: Buffer.concat(chunks) });
      res.writeHead(204).end();
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/hark`,
    notices,
    async next(n, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (notices.length < n) {
        if (Date.now() > deadline) throw new Error(`receiver got ${notices.length} of ${n} notices`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
      return notices.slice(0, n);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
