import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { limitConnections, type ConnectionLimits } from '../../query-api/connection-limits.js';
import { peerKey } from '../../query-api/peer-address.js';

/** A plain HTTP server on a real socket, with the limits under test; `answer` is what every request gets. */
async function serve(limits: ConnectionLimits, answer: Buffer): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Length': answer.length });
    res.end(answer);
  });
  limitConnections(server, limits);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return { server, port: (server.address() as { port: number }).port };
}

const connections = (server: Server) =>
  new Promise<number>((ok, fail) => server.getConnections((err, n) => (err ? fail(err) : ok(n))));

const opened: Socket[] = [];
const servers: Server[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) s.destroy();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((ok) => s.close(ok));
  }
});

/** Sends one GET and never reads the answer. */
function getNeverRead(port: number): Socket {
  const socket = connect({ port, host: '127.0.0.1' });
  opened.push(socket);
  socket.pause();
  socket.on('error', () => undefined);
  socket.once('connect', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
  return socket;
}

describe('limitConnections (issue 32, point 2)', () => {
  it('an answer far larger than the system buffers, never read: the socket is destroyed once no byte moved for stallMs', async () => {
    const { server, port } = await serve(
      { perAddress: 10, closeGraceMs: 200, stallMs: 500 },
      Buffer.alloc(64 << 20, 'x'),
    );
    servers.push(server);
    getNeverRead(port);
    await vi.waitFor(async () => expect(await connections(server)).toBe(1), { timeout: 5_000, interval: 20 });
    // Without the stall rule it stays open (it did: Node sets no deadline on an answer being written).
    await vi.waitFor(async () => expect(await connections(server)).toBe(0), {
      timeout: 10_000,
      interval: 100,
    });
  });

  it('a slow reader that keeps taking bytes is not cut', async () => {
    const size = 6 << 20;
    const { server, port } = await serve(
      { perAddress: 10, closeGraceMs: 200, stallMs: 2_000 },
      Buffer.alloc(size, 'y'),
    );
    servers.push(server);
    const socket = getNeverRead(port);
    let got = 0;
    socket.on('data', (c: Buffer) => {
      got += c.length;
      // Take a little at a time, for longer than stallMs in all.
      socket.pause();
      setTimeout(() => socket.resume(), 20);
    });
    socket.resume();
    const started = Date.now();
    await new Promise<void>((ok) => socket.once('close', ok).once('end', ok));
    expect(got).toBeGreaterThan(size); // the head and the whole body
    expect(Date.now() - started).toBeGreaterThan(2_000); // it did take longer than stallMs
  });

  it('after the service closed its side, a client that never reads keeps the socket closeGraceMs, no longer', async () => {
    const server = createServer(
      { headersTimeout: 500, requestTimeout: 500, connectionsCheckingInterval: 100 },
      () => undefined,
    );
    limitConnections(server, { perAddress: 10, closeGraceMs: 300, stallMs: 60_000 });
    // What query-api/client-error.ts does: the answer, then the server's side closed (Node waits for the
    // client's end after that, for ever when the client never reads).
    server.on('clientError', (_err, socket) =>
      socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'),
    );
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    servers.push(server);
    const port = (server.address() as { port: number }).port;
    const socket = connect({ port, host: '127.0.0.1' });
    opened.push(socket);
    socket.pause();
    socket.on('error', () => undefined);
    // A head that never ends: 408 after headersTimeout.
    socket.once('connect', () => socket.write('GET / HTTP/1.1\r\nHost: x\r\nX-a: '));
    await vi.waitFor(async () => expect(await connections(server)).toBe(1), { timeout: 5_000, interval: 20 });
    await vi.waitFor(async () => expect(await connections(server)).toBe(0), { timeout: 5_000, interval: 50 });
    // The answer was there to be read.
    const answer = await new Promise<string>((ok) => {
      socket.once('data', (c: Buffer) => ok(c.toString('latin1')));
      socket.resume();
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('one address holds at most perAddress connections; the others are closed as they arrive', async () => {
    const { server, port } = await serve(
      { perAddress: 3, closeGraceMs: 200, stallMs: 60_000 },
      Buffer.from('ok'),
    );
    servers.push(server);
    const held = Array.from({ length: 5 }, () => {
      const s = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.7' });
      opened.push(s);
      s.on('error', () => undefined);
      return s;
    });
    await Promise.all(held.map((s) => new Promise((ok) => s.once('connect', ok))));
    await vi.waitFor(async () => expect(await connections(server)).toBe(3), { timeout: 5_000, interval: 20 });
    // Another address is not counted with it.
    const other = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.8' });
    opened.push(other);
    await new Promise((ok) => other.once('connect', ok));
    await vi.waitFor(async () => expect(await connections(server)).toBe(4), { timeout: 5_000, interval: 20 });
  });
});

describe('peerKey', () => {
  it('IPv4 as it is, also IPv4-mapped; IPv6 by its /64', () => {
    expect(peerKey('127.0.0.2')).toBe('127.0.0.2');
    expect(peerKey('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(peerKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(peerKey('2001:db8:1:2:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(peerKey('2001:0db8:0001:0002::9')).toBe('2001:db8:1:2::/64');
    expect(peerKey('::1')).toBe('0:0:0:0::/64');
    expect(peerKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(peerKey(undefined)).toBe('?');
  });
});
