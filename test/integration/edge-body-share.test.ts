// Modes: embedded only — the HTTP edge's body budget, independent of the store
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { requestFrom } from '../support/edge-client.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * One tenant, or one address, cannot hold the request-body budget every other caller needs: each user and
 * each client address may hold a share of it (a quarter, at least one body at the 1 MiB limit). The
 * budget here is 4 MiB, so a share is 1 MiB: one slow 1 MiB body. Slow bodies are requests whose head
 * announces 1 MiB and whose body trickles (a byte now and then), each on its own connection, never done
 * within the test.
 */
const BUDGET_MB = 4;
const SLOW = 8; // slow bodies sent: before, the first four held the whole budget

let svc: TestService;
const held: Socket[] = [];

beforeAll(async () => {
  svc = await startTestService({
    HTTP_BODY_BUDGET_MB: String(BUDGET_MB),
    HTTP_HEADERS_TIMEOUT_MS: '60000',
    HTTP_REQUEST_TIMEOUT_MS: '60000',
  });
  const res = await svc.ingest([
    ...Array.from({ length: 6 }, (_, i) =>
      tenant({ userId: 60 + i, apiKey: `share-key-${60 + i}`, lists: [{ list_id: 6000 + i }] }),
    ).flat(),
  ]);
  expect(res.body.rejected).toEqual([]);
}, 180_000);

afterEach(() => {
  for (const s of held.splice(0)) s.destroy();
});
afterAll(() => svc?.stop());

const stats = (user: number) => `/api/1.2/rest/${user}/share-key-${user}/automation.stats.json`;

interface Slow {
  /** What the server answered so far ('' while the body is being waited for). */
  answer: () => string;
}

/** A POST announcing 1 MiB from `localAddress`, its body trickling a byte every second. */
function slowBody(user: number, localAddress: string): Slow {
  const { hostname, port } = new URL(svc.url!);
  const socket = connect({ host: hostname, port: Number(port), localAddress });
  held.push(socket);
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.on('error', () => undefined);
  socket.write(
    `POST ${stats(user)} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${1024 * 1024}\r\n\r\n{`,
  );
  const trickle = setInterval(() => socket.writable && socket.write(' '), 1_000);
  socket.once('close', () => clearInterval(trickle));
  return { answer: () => Buffer.concat(chunks).toString('latin1') };
}

const refused = (slow: Slow[]) =>
  slow.filter((s) => s.answer().startsWith('HTTP/1.1 503') && s.answer().includes('too many request bodies'))
    .length;

/** A small POST from another user at another address. */
const smallPost = (user: number, localAddress: string) =>
  requestFrom(svc.url!, {
    localAddress,
    path: stats(user),
    body: JSON.stringify({ list_id: 6000 + user - 60 }),
  });

describe('the body budget has a share per user and per address', () => {
  it('one user with many slow bodies (from several addresses) holds its share only: another user is answered 200', async () => {
    const slow = Array.from({ length: SLOW }, (_, i) => slowBody(60, `127.0.0.${10 + (i % 4)}`));
    // At least SLOW - 4 are refused either way (the budget holds 4): then the rest are held.
    await vi.waitFor(() => expect(refused(slow)).toBeGreaterThanOrEqual(SLOW - BUDGET_MB), {
      timeout: 20_000,
      interval: 50,
    });
    const other = await smallPost(61, '127.0.0.20');
    // Before: 503 "too many request bodies in flight" for as long as the slow bodies lasted.
    expect(other.status, other.text).toBe(200);
    // The user holds one 1 MiB body: every other one was refused.
    await vi.waitFor(() => expect(refused(slow)).toBe(SLOW - 1), { timeout: 20_000, interval: 50 });
    for (const s of slow.filter((x) => x.answer() !== ''))
      expect(s.answer()).toMatch(/\r\nRetry-After: 1\r\n/i);
  });

  it('one address with slow bodies of many users holds its share only: a caller at another address is answered 200', async () => {
    const slow = Array.from({ length: SLOW }, (_, i) => slowBody(60 + (i % 5), '127.0.0.30'));
    await vi.waitFor(() => expect(refused(slow)).toBeGreaterThanOrEqual(SLOW - BUDGET_MB), {
      timeout: 20_000,
      interval: 50,
    });
    const other = await smallPost(65, '127.0.0.31');
    expect(other.status, other.text).toBe(200);
    await vi.waitFor(() => expect(refused(slow)).toBe(SLOW - 1), { timeout: 20_000, interval: 50 });
  });

  it('once the slow bodies are gone their shares are back', async () => {
    const slow = [slowBody(62, '127.0.0.40'), slowBody(62, '127.0.0.40')];
    await vi.waitFor(() => expect(refused(slow)).toBe(1), { timeout: 20_000, interval: 50 });
    for (const s of held.splice(0)) s.destroy();
    await vi.waitFor(
      async () => {
        const res = await smallPost(62, '127.0.0.40');
        expect(res.status, res.text).toBe(200);
      },
      { timeout: 10_000, interval: 100 },
    );
  });
});
