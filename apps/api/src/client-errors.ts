import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { HarkError, errorBody, newRequestId } from '@hark/core';

const NODE_DEFAULT_STATUS: Record<string, number> = {
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/**
 * Requests Node's HTTP parser refuses before Express sees them. Header fields over the server's
 * limit (`--max-http-header-size`, 16 KiB) get 431 `headers_too_large` in the usual envelope with
 * an `X-Request-Id`, instead of Node's bare 431 without a body. Anything else is answered as Node
 * would answer it without this listener (a bare 400, 408 or 413), then the socket is destroyed.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex & { bytesWritten?: number }) => {
    // As Node: only a connection that has not answered anything yet gets an answer.
    if (socket.writable && socket.bytesWritten === 0) {
      if (err.code === 'HPE_HEADER_OVERFLOW') {
        const requestId = newRequestId();
        const body = JSON.stringify(errorBody(new HarkError('headers_too_large'), requestId));
        socket.end(
          'HTTP/1.1 431 Request Header Fields Too Large\r\n' +
            'Content-Type: application/json; charset=utf-8\r\n' +
            `Content-Length: ${Buffer.byteLength(body)}\r\n` +
            `X-Request-Id: ${requestId}\r\n` +
            'Connection: close\r\n\r\n' +
            body,
          () => socket.destroy(),
        );
        return;
      }
      const status = NODE_DEFAULT_STATUS[err.code ?? ''] ?? 400;
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`);
    }
    socket.destroy(err);
  });
}
