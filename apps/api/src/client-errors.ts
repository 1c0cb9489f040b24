import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { HarkError, errorBody, newRequestId } from '@hark/core';

/** Node's parser errors that are not a malformed request (400 `validation`). */
const ERRORS_BY_CODE: Record<string, () => HarkError> = {
  HPE_HEADER_OVERFLOW: () => new HarkError('headers_too_large'),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: () => new HarkError('payload_too_large'),
  ERR_HTTP_REQUEST_TIMEOUT: () => new HarkError('request_timeout'),
};

/**
 * Requests Node's HTTP parser refuses before Express sees them (a header value with U+0000, a
 * Content-Length that disagrees with Transfer-Encoding, header fields over the server's 16 KiB,
 * a request not received in time) get the usual envelope with an `X-Request-Id`, instead of
 * Node's bare answer without a body: 400 `validation` (`request: request_malformed`), 431
 * `headers_too_large`, 413 `payload_too_large` or 408 `request_timeout`. Then the socket is closed.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex & { bytesWritten?: number }) => {
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
        'Connection: close\r\n\r\n' +
        body,
      () => socket.destroy(),
    );
  });
}
