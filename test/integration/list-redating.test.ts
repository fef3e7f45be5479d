// Modes: embedded and server
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedStats, type RawActivity } from '../support/expected-stats.js';
import { Restartable } from '../support/restartable.js';
import { sha256 } from '../support/service.js';
import { rng } from '../support/rng.js';
import { isCatalogPoll, isChangePoll } from '../support/statements.js';

/**
 * docs/records.md "Counted once" and "Dating": a record is counted once, on its right date, whatever
 * happens between a `list` record and the re-dating of that list's earlier activity into its time zone:
 * the process killed right after the catalog write or anywhere inside the re-dating, or ClickHouse
 * failing there. Activity of list 77 arrives before its `list` record, so it is first dated in
 * DEFAULT_TIMEZONE (Bucharest); the list record then says New York, where most of these instants fall on
 * another day.
 */
/** The `server` test project (test/support/clickhouse-server-env.ts). */
const SERVER = Boolean(process.env.CLICKHOUSE_URL);
const USER = 3;
const KEY = 'redating-key';
const ZONE = 'America/New_York';
const FROM = '2026-11-08';
const TO = '2026-11-16';
const PERIOD = `&start_date=${FROM}&stop_date=${TO}`;

/** `n` records of list LIST; instants between 20:00 and 08:00 UTC, where the two zones' dates differ. */
function activity(
  list: number,
  n: number,
  seed: number,
  prefix: string,
): { wire: unknown[]; model: RawActivity[] } {
  const rnd = rng(seed);
  const types = ['send', 'open', 'click', 'purchase', 'event'];
  const wire: unknown[] = [];
  const model: RawActivity[] = [];
  for (let i = 0; i < n; i++) {
    const type = types[Math.floor(rnd() * types.length)]!;
    const day = Date.parse('2026-11-10T20:00:00Z') + Math.floor(rnd() * 4) * 86_400_000;
    const r: RawActivity = {
      type,
      event_id: `${prefix}-${i}`,
      list_id: list,
      workflow_id: 1 + Math.floor(rnd() * 3),
      subscriber_id: 1 + Math.floor(rnd() * 30),
      at: day + Math.floor(rnd() * 12 * 3_600_000),
    };
    const w: Record<string, unknown> = { ...r, timestamp: r.at };
    delete w.at;
    if (type === 'purchase') {
      r.value_ron = '12.5';
      r.value_eur = '2.5';
      Object.assign(w, { order_id: `o-${prefix}-${i}`, value_ron: '12.5', value_eur: '2.5' });
    }
    if (type === 'event') r.status = w.status = 'ok';
    wire.push(w);
    model.push(r);
  }
  return { wire, model };
}

const access = (list: number) => [
  { type: 'user', user_id: USER, api_key_sha256: sha256(KEY) },
  { type: 'list_access', user_id: USER, list_id: list, granted: true },
];
const listRecord = (list: number) => ({
  type: 'list',
  list_id: list,
  name: 'late',
  timezone: ZONE,
  currency: 'RON',
});

async function expectDatedIn(node: Restartable, list: number, model: RawActivity[]) {
  const base = `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${list}${PERIOD}`;
  const q = { listId: list, tz: ZONE, currency: 'RON', from: FROM, to: TO };
  const all = expectedStats(model, q);
  expect(all.length).toBeGreaterThan(3);
  // The same records in Bucharest fall on other dates: the check can tell the zones apart.
  expect(expectedStats(model, { ...q, tz: 'Europe/Bucharest' })).not.toEqual(all);
  expect(await node.get(base)).toEqual(all);
  expect(await node.get(`${base}&workflow_ids=2`)).toEqual(expectedStats(model, { ...q, workflowIds: [2] }));
  expect(await node.get(`${base}&workflow_ids=1,3`)).toEqual(
    expectedStats(model, { ...q, workflowIds: [1, 3] }),
  );
}

/** The ClickHouse operations after the list record's catalog insert: every one is a crash point. */
const POINTS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

describe('a kill between a list record and the re-dating of its earlier activity, or inside it', () => {
  // One data directory; each crash point uses a list of its own, so only the restarts repeat.
  const node = new Restartable({ CATALOG_POLL_MS: '60000' });
  beforeAll(() => node.start(), 60_000);
  afterAll(() => node.destroy());

  it.each(POINTS)(
    'killed at operation %i after the catalog write: after a restart every record is on its date in the list’s zone',
    async (k) => {
      const list = 100 + k;
      const first = activity(list, 400, k, `a${k}`);
      expect((await node.ingest([...access(list), ...first.wire])).body.rejected).toEqual([]);

      const fault = node.armAfterInsert('catalog', k, 'kill');
      const res = await node.ingest([listRecord(list)]);
      expect(fault.fired()).toBe(true);
      expect(res.status).not.toBe(200);
      await node.stop();

      await node.start();
      await expectDatedIn(node, list, first.model);
      // Later batches of the list count on top of every earlier record (nothing recomputed away).
      const later = activity(list, 150, 1000 + k, `b${k}`);
      expect((await node.ingest(later.wire)).body.rejected).toEqual([]);
      await expectDatedIn(node, list, [...first.model, ...later.model]);
    },
    120_000,
  );
});

describe('ClickHouse failing between a list record and the re-dating, or inside it', () => {
  const node = new Restartable({ CATALOG_POLL_MS: '60000' });
  beforeAll(() => node.start(), 60_000);
  afterAll(() => node.destroy());

  it.each(POINTS)(
    'fails at operation %i after the catalog write: the next write of the list finishes the re-dating',
    async (k) => {
      const list = 200 + k;
      const first = activity(list, 300, 50 + k, `c${k}`);
      expect((await node.ingest([...access(list), ...first.wire])).body.rejected).toEqual([]);

      const fault = node.armAfterInsert('catalog', k, 'error');
      const res = await node.ingest([listRecord(list)]);
      expect(fault.fired()).toBe(true);
      // Dropping the generations nobody reads any more, the catalog fingerprint a catalog write takes for
      // its cache, and (server mode) the change signal's poll, which runs on a timer of its own and may
      // take the armed operation's place, are housekeeping: their failure fails no write.
      const statement = fault.statement()!;
      const housekeeping =
        /^ALTER TABLE (daily|recent)_\w+ DELETE/.test(statement) ||
        isCatalogPoll(statement) ||
        isChangePoll(statement);
      expect(res.status === 200, fault.statement()).toBe(housekeeping);
      node.svc!.db.faultInjector = undefined;

      const later = activity(list, 100, 2000 + k, `d${k}`);
      expect((await node.ingest(later.wire)).body.rejected).toEqual([]);
      await expectDatedIn(node, list, [...first.model, ...later.model]);
    },
    120_000,
  );

  const newestGen = async (list: number) =>
    Number(
      (
        await node.svc!.db.query<{ g: string }>(
          'SELECT max(gen) AS g FROM list_dating WHERE list_id = {list:UInt64}',
          { list },
        )
      )[0]!.g,
    );

  it('a resent old record beside fresh ones of a re-dated list costs no new re-dating', async () => {
    const list = 310;
    const first = activity(list, 200, 11, 'f');
    expect((await node.ingest([...access(list), ...first.wire])).body.rejected).toEqual([]);
    expect((await node.ingest([listRecord(list)])).status).toBe(200);
    const gen = await newestGen(list);
    expect(gen).toBeGreaterThan(0);
    // The resent record's stored row is of the generation before the re-dating; it is a duplicate, so
    // it says nothing about rows a re-dating may have missed (today: a full rebuild per such batch).
    const later = activity(list, 50, 12, 'g');
    expect((await node.ingest([first.wire[0], ...later.wire])).body.rejected).toEqual([]);
    expect(await newestGen(list)).toBe(gen);
    await expectDatedIn(node, list, [...first.model, ...later.model]);
  }, 60_000);

  it(`${SERVER ? 'server: … waits for its owner until a restart takes it over' : 'embedded: … is taken over at the next write'} (a re-dating another instance claimed and never finished)`, async () => {
    const list = 320;
    const first = activity(list, 200, 13, 'h');
    expect((await node.ingest([...access(list), ...first.wire, listRecord(list)])).body.rejected).toEqual([]);
    const gen = await newestGen(list);
    // A claim of a process that died after claiming (one process owns an embedded store, so it is dead).
    await node.svc!.db.insert(
      'list_dating',
      ['list_id', 'gen', 'timezone', 'done', 'owner'],
      [[list, gen + 1, ZONE, 0, 'a-dead-instance']],
      `claim:${list}:${gen + 1}`,
    );
    // Today the new rows went into the dead generation, which readers never see (for 10 minutes).
    const later = activity(list, 50, 14, 'i');
    expect((await node.ingest(later.wire)).body.rejected).toEqual([]);
    if (SERVER) {
      // On a server the claim may be another live process's (ARCHITECTURE.md, "Re-dating a list"): the
      // write goes into its generation, not read until it is done; the start-up recovery takes it over.
      await expectDatedIn(node, list, first.model);
      await node.stop();
      await node.start();
    }
    await expectDatedIn(node, list, [...first.model, ...later.model]);
  }, 60_000);

  it('a list seen for the first time with a zone of its own costs no re-dating', async () => {
    const list = 300;
    const db = node.svc!.db;
    const statements: string[] = [];
    const command = db.command.bind(db);
    db.command = (sql, params, settings) => {
      statements.push(sql);
      return command(sql, params, settings);
    };
    expect((await node.ingest([...access(list), listRecord(list)])).body.rejected).toEqual([]);
    db.command = command;
    expect(statements.filter((s) => /ALTER|INSERT INTO daily_s/.test(s))).toEqual([]);
    const first = activity(list, 200, 7, 'e');
    expect((await node.ingest(first.wire)).body.rejected).toEqual([]);
    await expectDatedIn(node, list, first.model);
  }, 60_000);
});
