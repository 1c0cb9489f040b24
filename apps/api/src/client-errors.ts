import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { HarkError, errorBody, newRequestId } from '@hark/core';
import { type CorsOrigins, EXPOSED_HEADERS, originMatcher, variesOnOrigin } from './middleware/cors';

/** Node's parser errors that are not a malformed request (400 `validation`). */
const ERRORS_BY_CODE: Record<string, () => HarkError> = {
  HPE_HEADER_OVERFLOW: () => new HarkError('headers_too_large'),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: () => new HarkError('payload_too_large'),
  ERR_HTTP_REQUEST_TIMEOUT: () => new HarkError('request_timeout'),
};

/** What the parser's `clientError` hands over: the socket, and the request if its head was read. */
type ClientSocket = Duplex & {
  bytesWritten?: number;
  _httpMessage?: { req?: { headers: Record<string, string | string[] | undefined> } } | null;
};

/**
 * The request's Origin header, where Node got far enough to have it:
 * - the head was parsed (a body not received in time, a malformed chunked body): the request of
 *   the response in flight, `socket._httpMessage.req` (undocumented, but how Node itself decides
 *   whether it may still answer);
 * - the head is what failed (a malformed header, header fields over the limit): Node keeps no
 *   partial headers, only `err.rawPacket`, the bytes of the failed read, so its head lines are
 *   searched. An Origin line in an earlier read (a head split over TCP segments) is missed.
 * A head that never finished arriving (408 while the headers trickle in) has no Origin to read:
 * that answer cannot be read cross-origin.
 */
function requestOrigin(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: ClientSocket) {
  const parsed = socket._httpMessage?.req?.headers['origin'];
  if (parsed !== undefined) return typeof parsed === 'string' ? parsed : undefined;
  if (!err.rawPacket) return undefined;
  const head = err.rawPacket.toString('latin1').split('\r\n\r\n')[0]!;
  const found = new Set(
    head.split('\r\n').flatMap((line) => /^origin:[ \t]*(.*?)[ \t]*$/i.exec(line)?.slice(1) ?? []),
  );
  // Browsers send one; two different ones name no page.
  return found.size === 1 ? [...found][0] : undefined;
}

/**
 * The CORS lines the middleware would have added (cors.ts): without them a page on an allowed
 * origin cannot read these answers at all, and sees a bare network error.
 */
function corsLines(
  allowOrigin: (origin: string | undefined) => string | null,
  varies: boolean,
  origin: string | undefined,
): string {
  // Only a configured origin or `*` is written back, never the request's bytes.
  const allowed = allowOrigin(origin);
  return (
    (varies ? 'Vary: Origin\r\n' : '') +
    (allowed === null
      ? ''
      : `Access-Control-Allow-Origin: ${allowed}\r\nAccess-Control-Expose-Headers: ${EXPOSED_HEADERS}\r\n`)
  );
}

/**
 * Requests Node's HTTP parser refuses before Express sees them (a header value with U+0000, a
 * Content-Length that disagrees with Transfer-Encoding, header fields over the server's 16 KiB,
 * a request not received in time) get the usual envelope with an `X-Request-Id`, instead of
 * Node's bare answer without a body: 400 `validation` (`request: request_malformed`), 431
 * `headers_too_large`, 413 `payload_too_large` or 408 `request_timeout`, readable by the pages
 * `origins` allows (the API's `corsOrigins`). Then the socket is closed.
 */
export function answerClientErrors(server: Server, origins: CorsOrigins): void {
  const allowOrigin = originMatcher(origins);
  const varies = variesOnOrigin(origins);
  server.on('clientError', (err: NodeJS.ErrnoException, socket: ClientSocket) => {
    // As Node: only a connection that has not answered anything yet gets an answer.
    if (!socket.writable || socket.bytesWritten !== 0) {
      socket.destroy(err);
      return;
    }
    const error =
      ERRORS_BY_CODE[err.code ?? '']?.() ?? HarkError.validation({ request: 'request_malformed' });
    const requestId = newRequestId();
    const body = JSON.stringify(errorBody(error, requestId));
    socket.end(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        corsLines(allowOrigin, varies, requestOrigin(err, socket)) +
        'Connection: close\r\n\r\n' +
        body,
      () => socket.destroy(),
    );
  });
}
