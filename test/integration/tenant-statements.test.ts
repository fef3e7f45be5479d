// Modes: embedded only — asserts the embedded engine's statements and its day rows in memory
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MailstatsRecord } from '../../shared/records/index.js';
import { startTestService, type TestService } from '../support/service.js';
import { isCatalogPoll } from '../support/statements.js';

/**
 * What grows with the number of lists (tenants): a catalog batch dates every list it names, and
 * embedded that costs a constant number of engine statements per batch, not a few per list; a stats
 * answer of the embedded mode reads the engine once (the list's dating generation is the writer's, held
 * in memory), not twice. Correctness of dating and stats is list-redating's and stats-correctness'.
 */
const KEY = 'tenant-key';
const lists = (from: number, n: number, timezone = 'Europe/Bucharest'): MailstatsRecord[] =>
  Array.from(
    { length: n },
    (_, i) => ({ type: 'list', list_id: from + i, name: `l${from + i}`, timezone }) as MailstatsRecord,
  );

describe('statements per tenant', () => {
  let svc: TestService;
  const statements: string[] = [];
  beforeAll(async () => {
    svc = await startTestService();
    await svc.recovered;
    svc.db.faultInjector = async (what) => void statements.push(what.replace(/\s+/g, ' ').trim());
  });
  afterAll(() => svc?.stop());

  /** Statements of the writes (the catalog's change poll runs beside them on its own timer). */
  const counted = () => statements.filter((s) => !isCatalogPoll(s));

  it('a catalog batch of new lists runs as many statements for 40 lists as for 2', async () => {
    statements.length = 0;
    await svc.pipeline.write(lists(100, 2));
    const two = counted().length;
    statements.length = 0;
    await svc.pipeline.write(lists(200, 40));
    const forty = counted().length;
    expect(forty).toBe(two);
    // Every list is dated (a done generation in its zone), as one at a time did.
    const dated = await svc.db.query<{ n: number }>(
      `SELECT count(DISTINCT list_id) AS n FROM list_dating
       WHERE done = 1 AND timezone = 'Europe/Bucharest' AND list_id BETWEEN 200 AND 239`,
      {},
      { output_format_json_quote_64bit_integers: 0 },
    );
    expect(dated).toEqual([{ n: 40 }]);
  });

  it('re-dating 20 lists with rows to a new zone rebuilds each, in the new zone', async () => {
    const sends: MailstatsRecord[] = Array.from({ length: 20 }, (_, i) => ({
      type: 'send',
      event_id: `t${i}`,
      list_id: 200 + i,
      workflow_id: 1,
      subscriber_id: 1,
      // 23:30 UTC: the 11th in Bucharest, still the 10th in New York.
      timestamp: Date.parse('2026-11-10T23:30:00Z'),
    }));
    await svc.pipeline.write(sends);
    await svc.pipeline.write(lists(200, 20, 'America/New_York'));
    const days = await svc.db
      .query<{ d: string; n: number }>(
        `SELECT toString(day) AS d, count() AS n FROM daily_scopes FINAL
       WHERE list_id BETWEEN 200 AND 219 AND workflow_id = 0 AND trigger_id = 0
         AND gen = (SELECT max(gen) FROM list_dating AS l WHERE l.list_id = daily_scopes.list_id AND done = 1)
       GROUP BY d`,
        {},
        { output_format_json_quote_64bit_integers: 0 },
      )
      .catch(async () =>
        // Correlated subqueries may be unsupported: read the generations first.
        svc.db.query<{ d: string; n: number }>(
          `SELECT toString(day) AS d, count() AS n FROM daily_scopes FINAL
         WHERE list_id BETWEEN 200 AND 219 AND workflow_id = 0 AND trigger_id = 0
           AND (list_id, gen) IN (SELECT list_id, max(gen) FROM list_dating WHERE done = 1 GROUP BY list_id)
         GROUP BY d`,
          {},
          { output_format_json_quote_64bit_integers: 0 },
        ),
      );
    expect(days).toEqual([{ d: '2026-11-10', n: 20 }]);
  });

  it('a stats answer of a workflow subset (answer cache off) runs one engine statement, with no read of the dating', async () => {
    const caller = [
      { type: 'user', user_id: 1, api_key_sha256: createHash('sha256').update(KEY).digest('hex') },
      { type: 'list_access', user_id: 1, list_id: 200, granted: true },
    ];
    const { rejected } = await svc.pipeline.ingest(caller.map((value, i) => ({ line: i + 1, value })));
    expect(rejected).toEqual([]);
    svc.statsCache.enabled = false;
    const ask = (days: number) =>
      svc.call(`/api/1.2/rest/1/${KEY}/automation.stats.json?list_id=200&days=${days}&workflow_ids=1,2`);
    expect((await ask(7)).status).toBe(200); // the catalog look-ups, cached from then on
    statements.length = 0;
    const { status, body } = await ask(30);
    expect(status).toBe(200);
    expect(Array.isArray(body)).toBe(true);
    const reads = counted();
    expect(reads, JSON.stringify(reads)).toHaveLength(1);
    expect(reads[0]).not.toContain('list_dating');
  });

  it("this process's own catalog write drops the catalog's cached reads once, not again at the next poll", async () => {
    // The poll runs every CATALOG_POLL_MS on its own timer: after a write of this process (which drops
    // the cache at once), the poll saw a fingerprint it had not seen and dropped the warmed cache again,
    // so a request just after re-read the catalog (a stats answer ran 3 statements instead of 1).
    for (let i = 0; i < 3; i++) {
      await svc.catalog.write([{ type: 'list', list_id: 300 + i, name: `own${i}` } as never]);
      expect(await svc.catalog.list(300 + i)).toMatchObject({ name: `own${i}` });
      await new Promise((r) => setTimeout(r, 3 * svc.config.CATALOG_POLL_MS));
      statements.length = 0;
      expect(await svc.catalog.list(300 + i)).toMatchObject({ name: `own${i}` });
      expect(counted(), `write ${i}`).toEqual([]);
    }
  });

  it("all workflows, once the list's day rows are held, answer any period without the engine, and exactly after a write", async () => {
    svc.statsCache.enabled = false;
    const ask = async (from: string, to: string) => {
      const res = await svc.call(
        `/api/1.2/rest/1/${KEY}/automation.stats.json?list_id=200&start_date=${from}&stop_date=${to}`,
      );
      expect(res.status).toBe(200);
      return res.body as { date: string; sends_total: number }[];
    };
    await ask('2026-11-01', '2026-11-20'); // read by the engine; the list's rows are read for next time
    await svc.dayRows!.settled();
    statements.length = 0;
    expect((await ask('2026-11-05', '2026-11-15')).map((d) => [d.date, d.sends_total])).toEqual([
      ['2026-11-10', 1],
    ]);
    expect(await ask('2026-11-11', '2026-11-15')).toEqual([]);
    expect(counted()).toEqual([]);
    const more: MailstatsRecord[] = [
      {
        type: 'send',
        event_id: 'u1',
        list_id: 200,
        workflow_id: 1,
        subscriber_id: 2,
        timestamp: Date.parse('2026-11-10T12:00:00Z'),
      },
      {
        type: 'send',
        event_id: 'u2',
        list_id: 200,
        workflow_id: 1,
        subscriber_id: 2,
        timestamp: Date.parse('2026-11-12T12:00:00Z'),
      },
    ] as MailstatsRecord[];
    await svc.pipeline.write(more);
    expect((await ask('2026-11-05', '2026-11-15')).map((d) => [d.date, d.sends_total])).toEqual([
      ['2026-11-10', 2],
      ['2026-11-12', 1],
    ]);
    await svc.dayRows!.settled();
    statements.length = 0;
    expect((await ask('2026-11-12', '2026-11-12')).map((d) => [d.date, d.sends_total])).toEqual([
      ['2026-11-12', 1],
    ]);
    expect(counted()).toEqual([]);
  });
});
