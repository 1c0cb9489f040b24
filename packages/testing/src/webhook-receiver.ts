// A webhook receiver for tests: records what it is sent and answers as told; and the receiver's
// signature check, written from the spec with node:crypto only (not @hark/webhooks).
import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** The raw body, exactly as received. */
  body: string;
  at: number;
}

/** An answer, optionally after `delayMs`; `'hang'` never answers. */
export type Reply =
  | { status: number; body?: string; headers?: Record<string, string>; delayMs?: number }
  | 'hang';

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** Resolves when `n` requests have arrived. */
  received(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1; `reply(i)` answers the i-th request (0-based). */
export async function startReceiver(
  reply: (i: number, req: ReceivedRequest) => Reply = () => ({ status: 200, body: 'ok' }),
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const i = requests.push(r) - 1;
      for (const w of waiters.filter((x) => requests.length >= x.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      const answer = reply(i, r);
      if (answer === 'hang') return;
      const send = () => res.writeHead(answer.status, answer.headers ?? {}).end(answer.body ?? '');
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook?team=qa`,
    requests,
    received(n, timeoutMs = 15_000) {
      if (requests.length >= n) return Promise.resolve(requests.slice(0, n));
      return new Promise((resolve, reject) => {
        const t = setTimeout(
          () => reject(new Error(`receiver got ${requests.length} of ${n} requests`)),
          timeoutMs,
        );
        waiters.push({ n, resolve: () => (clearTimeout(t), resolve(requests.slice(0, n))) });
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The receiver's check, written from the spec with node:crypto only (not @hark/webhooks). */
export function signatureValid(req: ReceivedRequest, apiKey: string): { valid: boolean; t: number } {
  const header = String(req.headers['hark-signature'] ?? '');
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!m) return { valid: false, t: 0 };
  const t = Number(m[1]);
  const key = createHash('sha256').update(apiKey).digest('hex');
  const expected = createHmac('sha256', key).update(`${t}.${req.body}`).digest('hex');
  return { valid: expected === m[2], t };
}
