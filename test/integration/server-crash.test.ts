// Modes: server only — it SIGKILLs a ClickHouse server of its own (the embedded engine dies with its process).
import { afterAll, describe, expect, it } from 'vitest';
import { startClickHouseServer, type ClickHouseServer } from '../../scripts/clickhouse-server.mjs';
import { activityStream, STREAM_LISTS, STREAM_PERIOD, streamStats } from '../support/kafka.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * docs/deployment.md "A server crash": the ClickHouse server SIGKILLed in the middle of a batch and
 * restarted on the same data path, the client re-sending each unacknowledged body until it gets 200.
 * Nothing is lost or counted twice in `events` nor in any table an answer reads (daily_sets,
 * daily_scopes), on a single server without replication, and every answer equals an embedded twin's.
 */

/** Where in a batch the server dies: before or during one of the statements of EventStore.write. */
interface KillPoint {
  name: string;
  /** Matches the statement (`INSERT INTO <table>` for an insert of rows, else its SQL). */
  at: (what: string) => boolean;
  /** Milliseconds after the statement was sent; undefined: before it is sent. */
  after?: number;
}

const KILL_POINTS: KillPoint[] = [
  // The case: the body's rows (and its view's) stored, the ledger not yet written.
  { name: 'after the events insert, before the ledger', at: (w) => w === 'INSERT INTO event_ids' },
  { name: 'during the events insert', at: (w) => w === 'INSERT INTO events', after: 5 },
  { name: 'during the ledger write', at: (w) => w === 'INSERT INTO event_ids', after: 2 },
  { name: 'before the day recompute', at: (w) => w.includes('INSERT INTO daily_scopes') },
  { name: 'during the day recompute', at: (w) => w.includes('INSERT INTO daily_scopes'), after: 3 },
  { name: 'after the events insert (later)', at: (w) => w === 'INSERT INTO event_ids', after: 0 },
];

const BODIES = 18;
const PER_BODY = 1_500;

describe('the ClickHouse server killed with SIGKILL in the middle of batches', () => {
  let server: ClickHouseServer | undefined;
  let svc: TestService | undefined;
  let twin: TestService | undefined;
  afterAll(async () => {
    await svc?.stop();
    await twin?.stop();
    await server?.stop();
  });

  it('stores every record once in events and in every derived table; answers equal an embedded twin', async () => {
    server = await startClickHouseServer();
    const database = 'mailstats_server_crash';
    svc = await startTestService({ CLICKHOUSE_URL: server.url, CLICKHOUSE_DATABASE: database });
    // The twin: the embedded engine, fed the same records once each.
    twin = await startTestService({ CLICKHOUSE_URL: '' });
    expect(svc.db.mode).toBe('server');
    expect(twin.db.mode).toBe('embedded');

    const catalog = tenant({ userId: 7, apiKey: 'crash-key', lists: STREAM_LISTS });
    for (const s of [svc, twin]) expect((await s.ingest(catalog)).status).toBe(200);
    const { wire, model } = activityStream(BODIES * PER_BODY, 31);

    const srv = server;
    let killing: Promise<void> | undefined;
    let armed: KillPoint | undefined;
    const fired: string[] = [];
    svc.db.faultInjector = async (what) => {
      const point = armed;
      if (!point || !point.at(what)) return;
      armed = undefined;
      fired.push(point.name);
      if (point.after === undefined) {
        killing = srv.kill();
        await killing;
      } else {
        // While the statement runs: whatever the server had not finished is cut there.
        killing = new Promise((r) => setTimeout(r, point.after)).then(() => srv.kill());
      }
    };

    let restarts = 0;
    /** Re-send until acknowledged, restarting the server after each kill (as an operator's supervisor). */
    const send = async (body: unknown[]) => {
      for (let attempt = 0; ; attempt++) {
        const res = await svc!.ingest(body).catch((err: unknown) => ({ status: 0, body: String(err) }));
        if (res.status === 200) return attempt;
        if (attempt > 20)
          throw new Error(`body never acknowledged: ${res.status} ${JSON.stringify(res.body)}`);
        if (killing) {
          await killing;
          killing = undefined;
          await srv.restart();
          restarts++;
        } else {
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    };

    let retried = 0;
    for (let b = 0; b < BODIES; b++) {
      const body = wire.slice(b * PER_BODY, (b + 1) * PER_BODY);
      // Two bodies of three meet a kill, at each point in turn.
      if (b % 3 !== 2) armed = KILL_POINTS[(b - Math.floor(b / 3)) % KILL_POINTS.length];
      if ((await send(body)) > 0) retried++;
      armed = undefined;
      expect((await twin.ingest(body)).status).toBe(200);
    }
    expect(fired.length).toBe(Math.ceil((BODIES * 2) / 3));
    expect(new Set(fired)).toEqual(new Set(KILL_POINTS.map((p) => p.name)));
    expect(restarts).toBeGreaterThanOrEqual(fired.length);
    expect(retried).toBe(fired.length);

    // Once more after a restart of the service itself (its start-up recovery runs on what was left).
    svc.db.faultInjector = undefined;
    await svc.stop();
    svc = await startTestService({ CLICKHOUSE_URL: server.url, CLICKHOUSE_DATABASE: database });
    await svc.recovered;

    const sent = new Set(model.map((r) => r.event_id));
    const sends = model.filter((r) => r.type === 'send').length;
    const [events] = await svc.db.query<{ n: number; ids: number }>(
      'SELECT count() AS n, uniqExact(event_id) AS ids FROM events',
      {},
      { output_format_json_quote_64bit_integers: 0 },
    );
    expect(events).toEqual({ n: sent.size, ids: sent.size });
    // The derived tables, read as the answers read them: the lists' current generation only.
    const current = `(list_id, gen) IN (SELECT list_id, max(gen) FROM list_dating WHERE done = 1 GROUP BY list_id
      UNION ALL SELECT list_id, 0 FROM events WHERE list_id NOT IN (SELECT list_id FROM list_dating))`;
    const [sets] = await svc.db.query<{ records: number; sends: number }>(
      `SELECT sum(n) AS records, sumIf(n, type = 'send') AS sends FROM daily_sets WHERE ${current}`,
      {},
      { output_format_json_quote_64bit_integers: 0 },
    );
    expect(sets).toEqual({ records: sent.size, sends });
    const [scopes] = await svc.db.query<{ total: number }>(
      `SELECT sum(sends_total) AS total FROM daily_scopes FINAL WHERE workflow_id = 0 AND trigger_id = 0 AND ${current}`,
      {},
      { output_format_json_quote_64bit_integers: 0 },
    );
    expect(scopes).toEqual({ total: sends });

    for (const list of STREAM_LISTS) {
      for (const shape of ['', '&workflow_ids=1', '&workflow_ids=1,3']) {
        const path = `/api/1.2/rest/7/crash-key/automation.stats.json?list_id=${list.list_id}${STREAM_PERIOD}${shape}`;
        // A GET is safe to repeat: once more when a kept-alive socket was reset under it (Restartable.get).
        const get = (s: TestService) => s.call(path).catch(() => s.call(path));
        const [got, want] = await Promise.all([get(svc), get(twin)]);
        expect(got.status).toBe(200);
        expect(got.body).toEqual(want.body);
        expect(got.body).toEqual(streamStats(model, list, shape));
      }
    }
  }, 600_000);
});
