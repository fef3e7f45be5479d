// Modes: embedded only — ClickHouse is a loopback port nobody listens on (server-mode start-up before a server answers); no project's store is used
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer as createNetServer } from 'node:net';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

/**
 * docs/operations.md "Start-up": the listener comes first. While ClickHouse is awaited the process is alive
 * (/healthz 200), not ready (/readyz 503 naming ClickHouse), and every API, ingest or admin call answers the
 * error object 503 with Retry-After; SIGTERM still ends it within 10 s. A taken PORT ends it at once.
 */
const root = resolve(import.meta.dirname, '../..');

async function freePort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function startMain(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'main.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SEED_DEMO: 'false', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (c) => (output += String(c)));
  child.stderr!.on('data', (c) => (output += String(c)));
  const exited = new Promise<number | null>((ok) => child.on('exit', (code) => ok(code)));
  return { child, output: () => output, exited };
}

async function get(url: string, init?: RequestInit): Promise<Response | undefined> {
  return fetch(url, init).catch(() => undefined);
}

describe('ClickHouse unreachable at start: the listener answers while the service waits', () => {
  it('listens at once: /healthz 200, /readyz 503 naming ClickHouse, API 503 + Retry-After, SIGTERM < 10 s', async () => {
    const [port, chPort] = [await freePort(), await freePort()];
    const run = startMain({
      PORT: String(port),
      HOST: '127.0.0.1',
      CLICKHOUSE_URL: `http://127.0.0.1:${chPort}`,
      STARTUP_WAIT_SECONDS: '120',
      INGEST_TOKEN: 'listen-first-token-0123456789abcdef',
    });
    const base = `http://127.0.0.1:${port}`;
    let health: Response | undefined;
    for (let i = 0; i < 300 && !health; i++) {
      health = await get(`${base}/healthz`);
      if (!health) await new Promise((r) => setTimeout(r, 100));
    }
    expect(health?.status, run.output()).toBe(200);
    // The listener answered before ClickHouse was reached: start-up is still waiting for it.
    for (let i = 0; i < 100 && !/waiting for ClickHouse/.test(run.output()); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(run.output()).toMatch(/waiting for ClickHouse/);

    const ready = await get(`${base}/readyz`);
    expect(ready!.status).toBe(503);
    const state = (await ready!.json()) as { ready: boolean; reason: string };
    expect(state.ready).toBe(false);
    expect(state.reason).toMatch(/clickhouse/i);

    for (const [path, init] of [
      ['/api/1.2/rest/1001/some-key/list.all.json', undefined],
      ['/api/1.2/xmlrpc/1001/some-key', { method: 'POST', body: '<methodCall/>' }],
      [
        '/ingest',
        {
          method: 'POST',
          body: '[]',
          headers: { authorization: `Bearer listen-first-token-0123456789abcdef` },
        },
      ],
    ] as const) {
      const res = await get(`${base}${path}`, init);
      expect(res!.status, path).toBe(503);
      expect(Number(res!.headers.get('retry-after')), path).toBeGreaterThan(0);
      expect(await res!.json(), path).toEqual({
        err: true,
        message: 'Service unavailable: waiting for ClickHouse',
        code: 503,
      });
    }

    const t0 = Date.now();
    run.child.kill('SIGTERM');
    const code = await run.exited;
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(code).toBe(0);
  });
});

describe('a taken PORT', () => {
  it('exits non-zero at once, naming the port and EADDRINUSE', async () => {
    const taken = createNetServer();
    await new Promise<void>((ok) => taken.listen(0, '127.0.0.1', ok));
    const port = (taken.address() as { port: number }).port;
    try {
      const chPort = await freePort();
      // ClickHouse unreachable too: the listen error must come first, not after the wait.
      const run = startMain({
        PORT: String(port),
        HOST: '127.0.0.1',
        CLICKHOUSE_URL: `http://127.0.0.1:${chPort}`,
        STARTUP_WAIT_SECONDS: '120',
      });
      const code = await run.exited;
      expect(code).not.toBe(0);
      expect(code).not.toBeNull();
      expect(run.output()).toContain(`port ${port} is in use (EADDRINUSE); set PORT`);
      expect(run.output()).not.toMatch(/mailstats is running/);
    } finally {
      await new Promise<void>((ok) => taken.close(() => ok()));
    }
  });
});
