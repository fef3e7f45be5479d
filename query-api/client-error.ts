import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../shared/log.js';
import type { ApiError } from '../shared/errors.js';
import { badRequest, headersTooLarge, requestTimeout } from './api12/errors.js';
import { requestIdOf } from './request-log.js';

/** Node's parser codes for a head over `maxHeaderSize`. */
const HEADER_OVERFLOW = new Set(['HPE_HEADER_OVERFLOW']);
const TIMEOUTS = new Set(['ERR_HTTP_REQUEST_TIMEOUT', 'HPE_HEADER_TIMEOUT']);

/**
 * A request Node's HTTP parser refuses (malformed request line or header, a head over the size limit,
 * a head that never completes) gets the API's error object instead of Node's bare answer, where
 * an answer can still be written (docs/api.md "Errors"). There is no request object here: the answer is
 * written on the socket as it is. The log line carries only the parser's code: `err.rawPacket` holds the
 * request's bytes, api key and Authorization header included. The answer half-closes the socket; that a
 * client which never reads it cannot keep it is query-api/connection-limits.ts's part (HTTP_CLOSE_GRACE_MS).
 */
export function answerClientErrors(server: Server, log: Logger): void {
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => {
    // A peer that reset the connection, or a socket that cannot take an answer any more, or a response
    // already under way on it: nothing can be said, only closed.
    const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight) {
      socket.destroy();
      return;
    }
    const code = err.code ?? '';
    const error: ApiError = HEADER_OVERFLOW.has(code)
      ? headersTooLarge()
      : TIMEOUTS.has(code)
        ? requestTimeout()
        : badRequest();
    const id = requestIdOf(undefined);
    log.info({ req_id: id, parser_code: code, status: error.status }, 'request refused by the HTTP parser');
    const body = JSON.stringify(error);
    socket.end(
      `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${id}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  });
}
