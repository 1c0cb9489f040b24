import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import type { Response } from 'got';
import { classifyFailure, type FailureKind } from './failure';
import type { GuardedClient } from './guarded-client';

/** Most response-body bytes read; enough for a 512-character preview after redaction. */
export const RESPONSE_READ_LIMIT = 4096;

export interface PostJsonOptions {
  /** Total time for the whole exchange, connect to last byte read, in ms. Default 10 000. */
  timeoutMs?: number;
}

export interface PostJsonResult {
  /** The endpoint's status (3xx included: redirects are never followed); null when it never answered. */
  statusCode: number | null;
  /**
   * Up to {@link RESPONSE_READ_LIMIT} bytes of the body, decoded as UTF-8, NOT yet redacted:
   * run it through `redactPreview` before storing. Null when there was no answer.
   */
  bodyPreviewSource: string | null;
  /** Why there was no answer; null whenever a status came back. */
  error: FailureKind | null;
  /** Whole duration, in whole milliseconds. */
  durationMs: number;
}

/**
 * Sends one webhook-style POST and reports what happened; it never throws for network or HTTP
 * outcomes. Redirects are not followed (a 3xx is not a delivery). Once the status line has
 * arrived the endpoint has answered: a body that then stalls or breaks still yields the status,
 * with whatever body arrived before the deadline.
 */
export function postJson(
  client: GuardedClient,
  url: string,
  body: string,
  headers: Record<string, string>,
  { timeoutMs = 10_000 }: PostJsonOptions = {},
): Promise<PostJsonResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    let statusCode: number | null = null;
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;

    const stream = client.stream.post(url, {
      body,
      headers,
      followRedirect: false,
      throwHttpErrors: false,
      // Our own deadline below covers the whole exchange; got's must not cut in first.
      timeout: { request: timeoutMs + 1_000 },
    });

    const finish = (error: FailureKind | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      stream.destroy();
      const answered = statusCode !== null;
      resolve({
        statusCode,
        bodyPreviewSource: answered ? decode(chunks) : null,
        error: answered ? null : error,
        durationMs: Math.round(performance.now() - started),
      });
    };

    const deadline = setTimeout(() => finish('timeout'), timeoutMs);
    stream.once('response', (response: Response) => {
      statusCode = response.statusCode;
    });
    stream.on('data', (chunk: Buffer) => {
      const room = RESPONSE_READ_LIMIT - received;
      chunks.push(chunk.subarray(0, room));
      received += Math.min(room, chunk.length);
      if (received >= RESPONSE_READ_LIMIT) finish(null);
    });
    stream.once('end', () => finish(null));
    // `on`, not `once`: got can emit a second error while tearing down, which must not go uncaught.
    stream.on('error', (error: unknown) => finish(classifyFailure(error)));
  });
}

function decode(chunks: Buffer[]): string {
  // write() without end(): a multi-byte character cut at the read limit is dropped, not mangled.
  return new StringDecoder('utf8').write(Buffer.concat(chunks));
}
