// Modes: embedded only — the HTTP edge under a flood, independent of the store
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  INGEST_TOKEN,
  spawnService,
  stopService,
  untilServing,
  type ChildService,
} from '../support/kafka-child.js';
import { tenant } from '../support/service.js';

/**
 * Issue 19, point 5a: what slow, never-finished and compressed requests can cost. The service runs as
 * an operator runs it (main.ts in a child process) so that its memory can be read from /proc.
 */
const USER = 41;
const KEY = 'flood-key-41';
const LIST = 4100;
const HEADERS_TIMEOUT_MS = 2_000;
const REQUEST_TIMEOUT_MS = 4_000;
const MAX_CONNECTIONS = 600;

let child: ChildService;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mailstats-flood-'));
  child = await spawnService(
    {
      KAFKA_BROKERS: '',
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      HTTP_MAX_CONNECTIONS: String(MAX_CONNECTIONS),
      // Every connection here is from 127.0.0.1: this file is about memory and the overall cap; one
      // address's share of it is test/integration/edge-sockets.test.ts's.
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(MAX_CONNECTIONS),
      HTTP_BODY_BUDGET_MB: '16',
      // RSS here should count what the service holds, not short-lived garbage V8 has not collected yet:
      // Node 26's larger young generation kept 70–160 MiB more of it than Node 20 under the same flood
      // (measured: 160–262 MiB on Node 26 by default, 99 MiB with a 1 MB semi-space; Node 20 80–92 MiB
      // either way). Capping the semi-space makes the bound below the same on both runtimes.
      NODE_OPTIONS: '--max-semi-space-size=1',
    },
    dir,
  );
  await untilServing(child);
  const res = await fetch(`${child.base}/ingest`, {
    method: 'POST',
    headers: { authorization: `Bearer ${INGEST_TOKEN}`, 'content-type': 'application/x-ndjson' },
    body: tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST }] })
      .map((r) => JSON.stringify(r))
      .join('\n'),
  });
  expect(res.status, await res.text()).toBe(200);
  // Warm: the first calls load the engine's query paths, the catalog and the body readers once.
  for (let i = 0; i < 5; i++) {
    const ok = await fetch(`${child.base}/api/1.2/rest/${USER}/${KEY}/automation.stats.json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ list_id: LIST, days: 7 })),
    });
    expect(ok.status, await ok.text()).toBe(200);
  }
});

afterAll(async () => {
  await stopService(child);
  rmSync(dir, { recursive: true, force: true });
});

/** The child's resident memory (MiB), as the kernel counts it. */
function rssMiB(): number {
  const status = readFileSync(`/proc/${child.proc.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

interface Held {
  socket: Socket;
  isClosed: () => boolean;
  /** What the server wrote back (if anything). */
  answer: () => string;
  closed: Promise<number>;
}

/** Opens a connection, writes `bytes`, and keeps it open (never finishing the request). */
function hold(bytes: Buffer | string): Held {
  const { hostname, port } = new URL(child.base);
  const socket = connect({ host: hostname, port: Number(port) });
  const chunks: Buffer[] = [];
  const started = Date.now();
  socket.on('data', (c) => chunks.push(c));
  socket.on('error', () => undefined);
  let isClosed = false;
  const closed = new Promise<number>((resolve) =>
    socket.on('close', () => {
      isClosed = true;
      resolve(Date.now() - started);
    }),
  );
  socket.write(bytes);
  return { socket, isClosed: () => isClosed, answer: () => Buffer.concat(chunks).toString('latin1'), closed };
}

/** 1,000,000 zero bytes gzip to ~1 KB; the part sent here inflates to all of it, the rest never comes. */
const bomb = gzipSync(Buffer.alloc(1_000_000));
const head = (user: number, key: string) =>
  `POST /api/1.2/rest/${user}/${key}/automation.stats.json HTTP/1.1\r\nHost: localhost\r\n` +
  `Content-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: ${bomb.length + 1000}\r\n\r\n`;

/**
 * The highest RSS growth while the connections are held: for `ms`, and on until each has an answer or
 * was closed (at most 20 s), so that every request has been seen by the server.
 */
async function peakGrowthWhileHeld(connections: Held[], ms: number, baseline: number): Promise<number> {
  let peak = baseline;
  const started = Date.now();
  const pending = () => connections.some((c) => c.answer() === '' && !c.isClosed());
  while (Date.now() < started + ms || (pending() && Date.now() < started + 20_000)) {
    peak = Math.max(peak, rssMiB());
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const c of connections) c.socket.destroy();
  return peak - baseline;
}

describe('what never-finished compressed bodies cost', () => {
  it('400 authenticated connections inflating 1 MB each: memory bounded by the body budget (16 MiB here), the rest 503', async () => {
    const baseline = rssMiB();
    const held = Array.from({ length: 400 }, () => hold(Buffer.concat([Buffer.from(head(USER, KEY)), bomb])));
    const growth = await peakGrowthWhileHeld(held, 3_000, baseline);
    const answers = held.map((h) => h.answer());
    const unavailable = answers.filter((a) => a.startsWith('HTTP/1.1 503'));
    // Without a budget every one of them holds its megabyte (~400 MiB and more).
    expect(growth, `grew ${growth.toFixed(0)} MiB`).toBeLessThan(200);
    expect(unavailable.length).toBeGreaterThan(0);
    for (const a of unavailable) {
      expect(a).toMatch(/\r\nRetry-After: \d+\r\n/i);
      expect(a).toContain('"message":"Service unavailable: too many request bodies in flight","code":503');
    }
    // Once those connections are gone, their reservations are back: a body is read again.
    await new Promise((r) => setTimeout(r, 500));
    const after = await fetch(`${child.base}/api/1.2/rest/${USER}/${KEY}/automation.stats.json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ list_id: LIST, days: 7 })),
    });
    expect(after.status, await after.text()).toBe(200);
  });

  it('400 connections with a wrong key: each answered 101 before its body, nothing buffered', async () => {
    const baseline = rssMiB();
    const held = Array.from({ length: 400 }, (_, i) =>
      hold(Buffer.concat([Buffer.from(head(USER, `wrong-${i}`)), bomb])),
    );
    const growth = await peakGrowthWhileHeld(held, 2_000, baseline);
    expect(growth, `grew ${growth.toFixed(0)} MiB`).toBeLessThan(100);
    const answers = held.map((h) => h.answer().split('\r\n')[0] ?? '');
    expect(answers.filter((a) => a.startsWith('HTTP/1.1 403')).length, answers.slice(0, 3).join('; ')).toBe(
      400,
    );
  });
});

describe('slow requests are cut', () => {
  it('a trickled body is answered 408 within HTTP_REQUEST_TIMEOUT_MS', async () => {
    const c = hold(
      `POST /api/1.2/rest/${USER}/${KEY}/automation.stats.json HTTP/1.1\r\nHost: localhost\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
    );
    const timer = setInterval(() => c.socket.write(' '), 300);
    const closedAfter = await c.closed;
    clearInterval(timer);
    expect(c.answer()).toMatch(/^HTTP\/1\.1 408 /);
    expect(c.answer()).toContain('"code":408');
    expect(closedAfter).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 500);
    expect(closedAfter).toBeLessThan(REQUEST_TIMEOUT_MS + 2_500);
  });

  it('a head that never ends is answered 408 within HTTP_HEADERS_TIMEOUT_MS', async () => {
    const c = hold('GET /healthz HTTP/1.1\r\nHost: localhost\r\n');
    const timer = setInterval(() => c.socket.write('X-Slow: 1\r\n'), 300);
    const closedAfter = await c.closed;
    clearInterval(timer);
    expect(c.answer()).toMatch(/^HTTP\/1\.1 408 /);
    expect(closedAfter).toBeLessThan(HEADERS_TIMEOUT_MS + 2_500);
  });
});

describe('connections are capped', () => {
  it('beyond HTTP_MAX_CONNECTIONS a connection is closed at once; the service answers again after', async () => {
    const held = Array.from({ length: MAX_CONNECTIONS + 20 }, () => hold(''));
    await new Promise((r) => setTimeout(r, 3_000));
    // Closed by the cap: closed with no answer. A connection within the cap that sends nothing is cut by
    // HTTP_HEADERS_TIMEOUT_MS (2 s here) with a 408 inside these 3 s on any runtime whose check lands
    // in time (Node 26 closes all of them at ~2.1 s, Node 20 some at ~2 s and the rest at ~3.1 s).
    const closedEarly = held.filter((h) => h.isClosed() && h.answer() === '').length;
    expect(closedEarly).toBeGreaterThanOrEqual(20);
    expect(closedEarly).toBeLessThan(MAX_CONNECTIONS);
    for (const h of held.filter((c) => c.answer() !== '')) expect(h.answer()).toMatch(/^HTTP\/1\.1 408 /);
    for (const h of held) h.socket.destroy();
    await new Promise((r) => setTimeout(r, 300));
    expect((await fetch(`${child.base}/healthz`)).status).toBe(200);
  });
});
