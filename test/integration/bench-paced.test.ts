// Modes: embedded only — the bench harness itself (its pacing), not the store
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { pacedLoad } from '../../bench/paced.js';

/**
 * The benchmarks' open-loop load (bench/paced.ts) must count a stalled server as latency: a closed-loop
 * generator (autocannon, its rate limit included) stops sending while its connections wait, then times
 * only the requests it did send, which hides a stall (coordinated omission).
 */
let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((ok) => (server ? server.close(() => ok()) : ok()));
  server = undefined;
});

/** A server that holds every answer until `stallMs` after its first request, then answers at once. */
async function stallingServer(stallMs: number): Promise<{ origin: string; paths: string[] }> {
  let releaseAt = 0;
  const paths: string[] = [];
  server = createServer((req, res) => {
    paths.push(req.url ?? '');
    releaseAt ||= Date.now() + stallMs;
    setTimeout(() => res.end('ok'), Math.max(0, releaseAt - Date.now()));
  });
  await new Promise<void>((ok) => server!.listen(0, '127.0.0.1', () => ok()));
  return { origin: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, paths };
}

describe('bench/paced.ts', () => {
  it('times each request from when it was due, so requests queued behind a stall count it', async () => {
    // 100/s for 1 s over 2 connections; nothing is answered for the first 800 ms. Request i is due at
    // 10·i ms: the ~80 due during the stall wait 800 − 10·i ms from their due time (most of them unsent,
    // queued behind the 2 busy connections), the rest are answered at once.
    const { origin, paths } = await stallingServer(800);
    const r = await pacedLoad({ origin, paths: ['/a', '/b'], rate: 100, seconds: 1, connections: 2 });
    expect(r.offered).toBe(100);
    expect(r.completed).toBe(100);
    expect(r.failed).toBe(0);
    expect(r.unfinished).toBe(0);
    // Sorted, the 50th latency is among the stalled ones (≈ 300 ms); timed from the send it would be ~1 ms.
    expect(r.p50).toBeGreaterThan(150);
    expect(r.max).toBeGreaterThan(600);
    // The paths are taken in turn.
    expect(paths.filter((p) => p === '/a')).toHaveLength(50);
  });

  it('sends at the offered rate, not faster, when the server keeps up', async () => {
    const { origin, paths } = await stallingServer(0);
    const started = Date.now();
    const r = await pacedLoad({ origin, paths: ['/'], rate: 200, seconds: 1, connections: 4 });
    expect(r.completed).toBe(200);
    expect(paths).toHaveLength(200);
    // The last request is due at ~995 ms after the first: the run cannot end sooner (spawn time aside).
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    expect(r.rate).toBeGreaterThan(150);
    expect(r.rate).toBeLessThanOrEqual(205);
  });

  it('counts answers that are not 2xx as failed and requests never answered as unfinished', async () => {
    server = createServer((req, res) => {
      if (req.url === '/bad') {
        res.statusCode = 500;
        res.end();
      }
      // '/never' is never answered.
    });
    await new Promise<void>((ok) => server!.listen(0, '127.0.0.1', () => ok()));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const r = await pacedLoad({
      origin,
      paths: ['/bad', '/never'],
      rate: 20,
      seconds: 0.5,
      connections: 20,
      graceSeconds: 0.5,
    });
    expect(r.offered).toBe(10);
    expect(r.failed).toBe(5);
    expect(r.unfinished).toBe(5);
    expect(r.completed).toBe(0);
    expect(r.p50).toBe(Infinity);
  });
});
