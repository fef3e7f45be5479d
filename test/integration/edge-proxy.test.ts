// Modes: embedded only — the HTTP edge behind a reverse proxy, independent of the store
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { pipelinedFrom, requestFrom } from '../support/edge-client.js';
import { capturingLogger } from '../support/raw-http.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * TRUST_PROXY: behind a reverse proxy every connection comes from the proxy, so the per-address rules
 * take the client from the X-Forwarded-For the proxy adds, and only from a proxy named there. Here the
 * "proxy" is 127.0.0.1 (TRUST_PROXY=127.0.0.1); 127.0.0.2 and 127.0.0.3 are clients connecting directly,
 * whose X-Forwarded-For is ignored.
 */
const PROXY = '127.0.0.1';
const RATE = 1; // per second, burst 2: guesses outpace the refill even on a loaded machine
const PER_ADDRESS = 3;

let svc: TestService;
const { log, lines } = capturingLogger('info');
const opened: Socket[] = [];

beforeAll(async () => {
  svc = await startTestService(
    {
      TRUST_PROXY: PROXY,
      RATE_LIMIT_PER_KEY: String(RATE),
      HTTP_MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS),
      HTTP_BODY_BUDGET_MB: '4',
      HTTP_HEADERS_TIMEOUT_MS: '60000',
      HTTP_REQUEST_TIMEOUT_MS: '60000',
    },
    { log },
  );
  const res = await svc.ingest(
    Array.from({ length: 10 }, (_, i) =>
      tenant({ userId: 70 + i, apiKey: `proxy-key-${70 + i}`, lists: [{ list_id: 7000 + i }] }),
    ).flat(),
  );
  expect(res.body.rejected).toEqual([]);
}, 180_000);

afterEach(() => {
  for (const s of opened.splice(0)) s.destroy();
});
afterAll(() => svc?.stop());

const stats = (user: number, key = `proxy-key-${user}`) =>
  `/api/1.2/rest/${user}/${key}/automation.stats.json?list_id=${7000 + user - 70}`;

/** A GET from `localAddress` with `X-Forwarded-For: xff` (when given). */
const getFrom = (localAddress: string, path: string, xff?: string) =>
  requestFrom(svc.url!, { localAddress, path, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } });

describe('the failed-attempt budget is per client behind a trusted proxy', () => {
  it("a guesser behind the proxy spends its own budget, not that of the user's callers behind the same proxy", async () => {
    const U = 70;
    const guesses = await pipelinedFrom(
      svc.url!,
      PROXY,
      Array.from({ length: 12 * RATE }, (_, i) => ({
        path: stats(U, `guess-${i}`),
        headers: { 'x-forwarded-for': '10.9.9.9' },
      })),
    );
    expect(guesses).toContain(429);
    expect(guesses.filter((s) => s !== 403 && s !== 429)).toEqual([]);
    // The same proxy, another client: before, every caller behind the proxy was its address and got 429.
    const own = await pipelinedFrom(
      svc.url!,
      PROXY,
      Array.from({ length: 2 * RATE }, () => ({
        path: stats(U),
        headers: { 'x-forwarded-for': '10.8.8.8' },
      })),
    );
    expect(own).toEqual(Array(2 * RATE).fill(200));
  });

  it('a client that is not a trusted proxy is its own address whatever X-Forwarded-For it sends', async () => {
    const U = 71;
    const guesses = await pipelinedFrom(
      svc.url!,
      '127.0.0.2',
      Array.from({ length: 12 * RATE }, (_, i) => ({
        path: stats(U, `guess-${i}`),
        headers: { 'x-forwarded-for': `10.7.0.${i}` },
      })),
    );
    // Rotating X-Forwarded-For gives no further guesses: one budget, the burst and what refills.
    expect(guesses.filter((s) => s === 403).length).toBeLessThan(12 * RATE);
    expect(guesses.filter((s) => s !== 403 && s !== 429)).toEqual([]);
  });
});

describe('the connection share', () => {
  /** A connection from `localAddress` that sends nothing and is kept open. */
  const idle = (localAddress: string) =>
    new Promise<Socket>((resolve) => {
      const { hostname, port } = new URL(svc.url!);
      const s = connect({ host: hostname, port: Number(port), localAddress });
      opened.push(s);
      s.on('error', () => undefined);
      s.once('connect', () => resolve(s));
    });

  it('a trusted proxy is not held to one address share; a direct client is', async () => {
    for (let i = 0; i < 3 * PER_ADDRESS; i++) await idle(PROXY);
    // Before: the proxy's connections over its share were closed as they arrived.
    const through = await getFrom(PROXY, '/healthz', '10.6.6.6');
    expect(through.status).toBe(200);

    for (let i = 0; i < PER_ADDRESS; i++) await idle('127.0.0.3');
    await expect(getFrom('127.0.0.3', '/healthz', '10.6.6.7')).rejects.toThrow(/ECONNRESET|socket hang up/);
  });
});

describe('the body share is per client behind a trusted proxy', () => {
  it("one client's slow bodies through the proxy do not take another client's room", async () => {
    const { hostname, port } = new URL(svc.url!);
    const slow = Array.from({ length: 4 }, (_, i) => {
      const s = connect({ host: hostname, port: Number(port), localAddress: PROXY });
      opened.push(s);
      const chunks: Buffer[] = [];
      s.on('data', (c: Buffer) => chunks.push(c));
      s.on('error', () => undefined);
      s.write(
        `POST ${stats(72 + i)} HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 10.1.1.1\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${1024 * 1024}\r\n\r\n{`,
      );
      return () => Buffer.concat(chunks).toString('latin1');
    });
    // Of four 1 MiB bodies from one client, its share (1 MiB of the 4 MiB budget) holds one.
    await vi.waitFor(() => expect(slow.filter((a) => a().startsWith('HTTP/1.1 503')).length).toBe(3), {
      timeout: 20_000,
      interval: 50,
    });
    const other = await requestFrom(svc.url!, {
      localAddress: PROXY,
      path: stats(76),
      headers: { 'x-forwarded-for': '10.2.2.2' },
      body: JSON.stringify({ list_id: 7006 }),
    });
    // Before: the proxy's address share was the first client's, and the other got 503.
    expect(other.status, other.text).toBe(200);
  });
});

describe('the request log', () => {
  const requestLine = (id: string) =>
    lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.req_id === id);

  it('names the client in client_ip: the one the trusted proxy gives, else the peer', async () => {
    const viaProxy = await requestFrom(svc.url!, {
      localAddress: PROXY,
      path: '/healthz',
      // A client may send its own X-Forwarded-For; the proxy appends the address it saw, which is the one
      // believed (TRUST_PROXY names one hop here).
      headers: { 'x-forwarded-for': '203.0.113.66, 10.4.4.4', 'x-request-id': 'proxy-log-1' },
    });
    expect(viaProxy.status).toBe(200);
    const direct = await requestFrom(svc.url!, {
      localAddress: '127.0.0.2',
      path: '/healthz',
      headers: { 'x-forwarded-for': '10.5.5.5', 'x-request-id': 'proxy-log-2' },
    });
    expect(direct.status).toBe(200);
    await vi.waitFor(() => expect(requestLine('proxy-log-2')).toBeDefined(), { timeout: 5_000 });
    expect(requestLine('proxy-log-1').client_ip).toBe('10.4.4.4');
    expect(requestLine('proxy-log-2').client_ip).toBe('127.0.0.2');
  });

  it('a stats request sent again (answered in front of the app) names the client too', async () => {
    for (const id of ['proxy-log-3', 'proxy-log-4']) {
      const res = await requestFrom(svc.url!, {
        localAddress: PROXY,
        path: stats(77),
        headers: { 'x-forwarded-for': '10.4.4.5', 'x-request-id': id },
      });
      expect(res.status, res.text).toBe(200);
    }
    await vi.waitFor(() => expect(requestLine('proxy-log-4')).toBeDefined(), { timeout: 5_000 });
    expect(requestLine('proxy-log-3').client_ip).toBe('10.4.4.5');
    expect(requestLine('proxy-log-4').client_ip).toBe('10.4.4.5');
  });
});
