import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { peerKey } from './peer-address.js';

export interface ConnectionLimits {
  /** Connections one peer address (peerKey) may hold at once; further ones are closed as they arrive. */
  perAddress: number;
  /** How long a socket whose answer is written out and whose side is closed may wait for the client (ms). */
  closeGraceMs: number;
  /** How long an answer may sit unsent because the client does not read it (ms). */
  stallMs: number;
  /**
   * A trusted proxy (TRUST_PROXY): its connections carry many clients, so it is not held to the share of
   * one address (HTTP_MAX_CONNECTIONS still holds).
   */
  trusted?: (address: string) => boolean;
}

/** How often sockets are looked at for answers the client stopped reading. */
const SWEEP_MS = 1_000;

/**
 * What no client may hold (docs/operations.md "HTTP limits"), beyond Node's own deadlines for a request:
 *
 * - a socket after its answer: once the service has closed its side (an error answer of the HTTP parser,
 *   a `Connection: close` answer) and the answer is handed to the system, the client has `closeGraceMs`
 *   to read it and close; then the socket is destroyed. Node only half-closes such a socket and waits for
 *   the client's end, so a client that never read kept it, and its place under HTTP_MAX_CONNECTIONS,
 *   for ever (1,000 of them took the service down). Destroying at once instead could reset
 *   the connection before the answer was read, when the client is still sending.
 * - an answer the client does not read: bytes waiting to be sent and not one of them taken for
 *   `stallMs` (a keep-alive socket with a large answer, or many pipelined ones, never read);
 * - more than `perAddress` connections from one peer address at once, so that one address cannot take
 *   all of HTTP_MAX_CONNECTIONS (server.maxConnections) from everyone else; a trusted proxy excepted.
 */
export function limitConnections(server: Server, limits: ConnectionLimits): void {
  const perPeer = new Map<string, number>();
  const sockets = new Map<Socket, { pending: number; queued: number; since: number }>();

  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    const proxy = address !== undefined && limits.trusted !== undefined && limits.trusted(address);
    const peer = proxy ? undefined : peerKey(address);
    if (peer !== undefined) {
      const held = perPeer.get(peer) ?? 0;
      if (held >= limits.perAddress) {
        socket.destroy();
        return;
      }
      perPeer.set(peer, held + 1);
    }
    sockets.set(socket, { pending: 0, queued: 0, since: Date.now() });
    let grace: NodeJS.Timeout | undefined;
    socket.once('finish', () => {
      grace = setTimeout(() => socket.destroy(), limits.closeGraceMs).unref();
    });
    socket.once('close', () => {
      if (grace) clearTimeout(grace);
      sockets.delete(socket);
      if (peer === undefined) return;
      const left = (perPeer.get(peer) ?? 1) - 1;
      if (left > 0) perPeer.set(peer, left);
      else perPeer.delete(peer);
    });
  });

  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [socket, seen] of sockets) {
      const pending = socket.writableLength;
      const queued = writeQueueSize(socket);
      // Progress is the client taking bytes: a queue getting shorter. The system's queue (libuv's) shrinks
      // with each part of a large write it hands on, the stream's once a whole write is done.
      if (pending === 0 || pending < seen.pending || queued < seen.queued) seen.since = now;
      else if (now - seen.since >= limits.stallMs) socket.destroy();
      seen.pending = pending;
      seen.queued = queued;
    }
  }, SWEEP_MS).unref();
  server.once('close', () => clearInterval(sweep));
}

/**
 * Bytes libuv still holds for the socket (`handle.writeQueueSize`, which Node's own socket timeout reads
 * to tell a slow write from a stuck one); 0 when there is no handle.
 */
function writeQueueSize(socket: Socket): number {
  const handle = (socket as unknown as { _handle?: { writeQueueSize?: number } | null })._handle;
  return handle?.writeQueueSize ?? 0;
}
