import { createClient } from '@clickhouse/client';
import type { Server } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../query-api/app.js';
import { edgeGuards } from '../../query-api/edge-guard.js';
import { listAll } from '../../query-api/lists/handler.js';
import { Catalog } from '../../shared/catalog/catalog.js';
import { Db } from '../../shared/clickhouse/client.js';
import { loadConfig } from '../../shared/config.js';

/**
 * docs/operations.md "Start-up": ClickHouse going away after start is the caller's 503 with Retry-After, not a
 * 500. The ClickHouse server here is gone for real: a client pointed at a loopback port nothing listens on
 * (the refused connection is the genuine error the client raises; no server of a supported version can be
 * run here to stop and start again).
 */
async function closedPort(): Promise<number> {
  const s = createNetServer();
  await new Promise<void>((ok) => s.listen(0, '127.0.0.1', ok));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}

let server: Server;
let base: string;
beforeAll(async () => {
  const port = await closedPort();
  const db = new Db(createClient({ url: `http://127.0.0.1:${port}`, request_timeout: 5_000 }), 'server');
  const log = pino({ level: 'silent' });
  const catalog = new Catalog(db, 'UTC', log);
  const config = loadConfig({ CLICKHOUSE_URL: `http://127.0.0.1:${port}` });
  const app = createApp({
    log,
    operations: { 'list.all': (caller, params) => listAll({ catalog }, caller, params) },
    ingest: undefined,
    edge: edgeGuards(config, catalog),
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((ok) => server.once('listening', ok));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(async () => {
  await new Promise((ok) => server.close(ok));
});

describe('ClickHouse unreachable after start', () => {
  it('an API call whose user lookup cannot reach ClickHouse is 503 with Retry-After, not 500', async () => {
    const res = await fetch(`${base}/api/1.2/rest/1001/some-key/list.all.json`);
    expect(res.status).toBe(503);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await res.json()).toEqual({
      err: true,
      message: 'Service unavailable: ClickHouse is not answering',
      code: 503,
    });
  });
});
