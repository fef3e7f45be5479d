// Modes: embedded only — a server that is gone for good is simulated with a loopback port; server-crash covers a real server dying
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
import { startTestService, tenant, type TestService } from '../support/service.js';

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

describe('ClickHouse away after start, then back, without a restart', () => {
  // The real embedded engine; "away" is every statement failing as a refused connection does
  // (the fault hook of Db), since no ClickHouse server of a supported version can be stopped and
  // started again here. What is checked is the service's side: nothing cached from the outage.
  const refused = async () => {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8123'), { code: 'ECONNREFUSED' });
  };
  const KEY = 'away-and-back-key-0123456789abcdef';
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ CATALOG_POLL_MS: '60000' });
    const records = [
      ...tenant({ userId: 71, apiKey: KEY, lists: [{ list_id: 71, timezone: 'UTC' }] }),
      ...[1, 2, 3].map((i) => ({
        type: 'send',
        event_id: `away-${i}`,
        list_id: 71,
        workflow_id: 1,
        subscriber_id: i,
        timestamp: '2026-11-02T10:00:00Z',
      })),
    ];
    expect((await svc.ingest(records)).body.rejected).toEqual([]);
    // Ready before the outage (the render workers start beside the store), so that what /readyz says
    // after it is about ClickHouse alone.
    for (let i = 0; (await fetch(`${svc.url}/readyz`)).status !== 200; i++) {
      if (i > 300) throw new Error('the service did not become ready within 30 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 60_000);
  afterAll(() => svc.stop());

  it('answers 503 + Retry-After while away (API, /ingest, /readyz) and as before once back', async () => {
    const stats = `/api/1.2/rest/71/${KEY}/automation.stats.json?list_id=71&start_date=2026-11-01&stop_date=2026-11-03`;
    const send = (id: string) => ({
      type: 'send',
      event_id: id,
      list_id: 71,
      workflow_id: 1,
      subscriber_id: 9,
      timestamp: '2026-11-02T11:00:00Z',
    });
    svc.db.faultInjector = refused;
    try {
      // Nothing of this user or list was read since the catalog write: the lookups need the engine.
      const away = await svc.call(stats);
      expect(away.status).toBe(503);
      expect(away.body).toEqual({
        err: true,
        message: 'Service unavailable: ClickHouse is not answering',
        code: 503,
      });
      const ingest = await svc.ingest([send('away-late')]);
      expect(ingest.status).toBe(503);
      const ready = await fetch(`${svc.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(Number(ready.headers.get('retry-after') ?? '1')).toBeGreaterThan(0);
    } finally {
      svc.db.faultInjector = undefined;
    }
    expect((await fetch(`${svc.url}/readyz`)).status).toBe(200);
    const back = await svc.call(stats);
    expect(back.status).toBe(200);
    expect(back.body.map((d: { date: string; sends_total: number }) => [d.date, d.sends_total])).toEqual([
      ['2026-11-02', 3],
    ]);
    // The record refused while away is accepted when sent again, and counted once.
    expect((await svc.ingest([send('away-late')])).body.rejected).toEqual([]);
    const after = await svc.call(stats);
    expect(after.body[0].sends_total).toBe(4);
  }, 60_000);
});
