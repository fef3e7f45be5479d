import {
  createServer,
  type IncomingMessage,
  type RequestListener,
  type Server,
  type ServerResponse,
} from 'node:http';
import { maxConnectionsPerAddress, trustProxy, type Config } from '../shared/config.js';
import { badRequest } from './api12/errors.js';
import { limitConnections } from './connection-limits.js';
import { requestIdOf } from './request-log.js';

/**
 * How often Node looks for requests past their header or request deadline. Its default (30 s) would let
 * a slow request live up to 30 s past the deadline; a check per second costs next to nothing.
 */
const CHECK_INTERVAL_MS = 1_000;

/**
 * An HTTP/1.1 request without `Host` (RFC 9112 §3.2) gets the error object, like every other failure
 * (docs/api.md, errors). Node would refuse it itself with a bare 400 before any handler runs, so its own
 * check is off (`requireHostHeader: false`) and this one answers instead; the connection is closed.
 */
function requireHost(next: RequestListener): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const http11 = req.httpVersionMajor === 1 && req.httpVersionMinor === 1;
    if (!http11 || req.headers.host !== undefined) return next(req, res);
    const body = JSON.stringify(badRequest('an HTTP/1.1 request needs a Host header'));
    res.shouldKeepAlive = false;
    res.writeHead(400, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'X-Request-Id': requestIdOf(undefined),
      Connection: 'close',
    });
    res.end(body);
  };
}

/**
 * The listener's limits (docs/operations.md, HTTP limits): short deadlines for a request's head and for
 * the whole request, so a slow or never-finished request cannot hold a connection and its buffers for
 * minutes (Node's defaults are 60 s and 300 s), and a cap on connections open at once (further ones
 * are closed as they arrive), of which one peer address holds at most its share; and no socket kept
 * open past its answer (query-api/connection-limits.ts).
 */
export function createLimitedServer(app: RequestListener, config: Config): Server {
  const server = createServer(
    {
      requireHostHeader: false,
      headersTimeout: config.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeout: config.HTTP_REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: CHECK_INTERVAL_MS,
    },
    requireHost(app),
  );
  applyServerLimits(server, config);
  // No socket outlives its answer by more than a grace, and one address gets a share of the connections
  // (a trusted proxy, the peer of every client behind it, excepted).
  const trust = trustProxy(config.TRUST_PROXY);
  limitConnections(server, {
    trusted: trust && ((address) => trust(address, 0)),
    perAddress: maxConnectionsPerAddress(config),
    closeGraceMs: config.HTTP_CLOSE_GRACE_MS,
    stallMs: config.HTTP_REQUEST_TIMEOUT_MS,
  });
  return server;
}

/** The limits that are properties of a server (also for a server made elsewhere). */
export function applyServerLimits(server: Server, config: Config): void {
  server.headersTimeout = config.HTTP_HEADERS_TIMEOUT_MS;
  server.requestTimeout = config.HTTP_REQUEST_TIMEOUT_MS;
  server.maxConnections = config.HTTP_MAX_CONNECTIONS;
}
