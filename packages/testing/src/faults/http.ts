// The fault scenarios' HTTP client: never throws; a transport failure is status 0 with `err`.
import http from 'node:http';
import type { TestAccount } from '../factories';

export interface Res {
  status: number;
  body: {
    data?: { id: string; status: string; receivedBytes?: number };
    error?: { code: string; retryable: boolean };
  };
  err?: string;
}

function parse(text: string): Res['body'] {
  try {
    return JSON.parse(text) as Res['body'];
  } catch {
    return {}; // not JSON
  }
}

/** `status` and `status:code` of an error answer, for tallies. */
export const answerKey = (r: Res): string => `${r.status}${r.body.error ? `:${r.body.error.code}` : ''}`;

/** A request with the account's key (keep-alive, fetch). */
export async function req(
  port: number,
  method: string,
  p: string,
  acct: TestAccount,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Res> {
  try {
    const r = await fetch(`http://127.0.0.1:${port}${p}`, {
      method,
      headers: { ...acct.auth, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { status: r.status, body: parse(await r.text()) };
  } catch (e) {
    return {
      status: 0,
      body: {},
      err: (e as Error & { cause?: { code?: string } }).cause?.code ?? (e as Error).message,
    };
  }
}

/** A POST on a fresh connection (no keep-alive), so a reset means the server dropped this very request. */
export function postFresh(
  port: number,
  p: string,
  acct: TestAccount,
  body: unknown,
  idempotencyKey?: string,
): Promise<Res> {
  return new Promise((resolve) => {
    const data = JSON.stringify(body);
    const r = http.request(
      {
        host: '127.0.0.1',
        port,
        path: p,
        method: 'POST',
        agent: false,
        headers: {
          ...acct.auth,
          ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(data),
        },
      },
      (res) => readRes(res, resolve),
    );
    r.on('error', (e: NodeJS.ErrnoException) => resolve({ status: 0, body: {}, err: e.code ?? e.message }));
    r.end(data);
  });
}

/** Reads a response to its end into a `Res`; a response cut off resolves with `err`, never throws. */
function readRes(res: http.IncomingMessage, resolve: (r: Res) => void): void {
  let text = '';
  res.on('data', (c: Buffer) => (text += c.toString()));
  res.on('end', () => resolve({ status: res.statusCode ?? 0, body: parse(text) }));
  res.on('error', (e: NodeJS.ErrnoException) =>
    resolve({ status: 0, body: {}, err: `response ${e.code ?? e.message}` }),
  );
}

/**
 * A request whose body is `bytes` (an upload, a chunk) on a fresh connection. `midway`, if
 * given, runs once the first half is sent and before the rest (a fault injected while the body
 * streams). Never throws, like `req`.
 */
export function sendBytes(
  port: number,
  method: string,
  p: string,
  acct: TestAccount,
  bytes: Buffer,
  midway?: () => Promise<void>,
): Promise<Res> {
  return new Promise((resolve) => {
    const r = http.request(
      {
        host: '127.0.0.1',
        port,
        path: p,
        method,
        agent: false,
        headers: { ...acct.auth, 'content-type': 'application/octet-stream', 'content-length': bytes.length },
      },
      (res) => readRes(res, resolve),
    );
    r.on('error', (e: NodeJS.ErrnoException) => resolve({ status: 0, body: {}, err: e.code ?? e.message }));
    if (!midway) return void r.end(bytes);
    const half = bytes.length >> 1;
    r.write(bytes.subarray(0, half), () => {
      void midway().then(
        () => r.end(bytes.subarray(half)),
        () => r.end(bytes.subarray(half)),
      );
    });
  });
}
