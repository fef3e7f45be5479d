// Modes: server only — two processes on one database claim the dating of the same new lists at once
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStore } from '../../shared/clickhouse/event-store.js';
import { checkRecord, type MailstatsRecord } from '../../shared/records/index.js';
import { startTestService, type TestService } from '../support/service.js';

const LISTS = Array.from({ length: 80 }, (_, i) => 5000 + i);
const INT = { output_format_json_quote_64bit_integers: 0 } as const;

const record = (raw: Record<string, unknown>): MailstatsRecord => {
  const check = checkRecord(raw);
  if (!check.ok) throw new Error(check.reason);
  return check.record;
};
const catalog = (ids: number[], zone: (id: number) => string) =>
  ids.map((id) => record({ type: 'list', list_id: id, name: `c${id}`, timezone: zone(id) }));
/** `n` sends per list, ids prefixed: 22:30 UTC on the 10th, the 11th in Tokyo, the 10th in New York. */
const sends = (prefix: string, ids: number[], n: number) =>
  ids.flatMap((id) =>
    Array.from({ length: n }, (_, k) =>
      record({
        type: 'send',
        event_id: `${prefix}-${id}-${k}`,
        list_id: id,
        workflow_id: 1,
        subscriber_id: k + 1,
        timestamp: '2026-11-10T22:30:00Z',
      }),
    ),
  );
const zoneOf = (id: number) => (id % 2 ? 'Asia/Tokyo' : 'America/New_York');

/**
 * Two processes (two services on ONE database of the run's real server) store catalogs and activity of
 * the same new lists at the same moment. Their batch claims of the lists' first generation may both
 * stand (one deduplication token covers a whole batch insert): the earliest is the owner for both of
 * them and for DATING (ARCHITECTURE.md "Re-dating a list"), the loser writes into the owner's
 * generation, and nothing is lost or counted twice. A claim's `at` is set before it is stored, so an
 * earlier claim can be stored after the later one was read back as the only one: both then complete the
 * generation, which for a new list is only a done row each (nothing is rebuilt); the second test below
 * makes that order happen on purpose.
 */
describe('two server-mode processes claiming the same new lists at once', () => {
  let a: TestService;
  let b: TestService;
  beforeAll(async () => {
    const database = `mailstats_test_${randomBytes(6).toString('hex')}`;
    a = await startTestService({ CLICKHOUSE_DATABASE: database });
    b = await startTestService({ CLICKHOUSE_DATABASE: database });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
  });

  it('dates and completes every generation, and every record is counted once in its zone', async () => {
    // Rounds of lists new to both: the same catalog at once, then activity at once (distinct ids: the
    // store's dedup look-up assumes one writer per list, as Kafka keys events by list), each round's
    // lists in another order for the two.
    for (let round = 0; round < 4; round++) {
      const ids = LISTS.filter((id) => id % 4 === round);
      await Promise.all([
        a.pipeline.write(catalog(ids, zoneOf)),
        b.pipeline.write(catalog([...ids].reverse(), zoneOf)),
      ]);
      await Promise.all([a.pipeline.write(sends('a', ids, 3)), b.pipeline.write(sends('b', ids, 2))]);
    }
    // Also lists first named by activity batches racing a catalog of them (dated in the catalog zone).
    const late = Array.from({ length: 20 }, (_, i) => 6000 + i);
    await Promise.all([
      a.pipeline.write(catalog(late, zoneOf)).then(() => a.pipeline.write(sends('a', late, 3))),
      b.pipeline.write(catalog(late, zoneOf)).then(() => b.pipeline.write(sends('b', late, 2))),
    ]);
    const all = [...LISTS, ...late];

    // (Both claims of a generation stood for most lists when this was written: 60 of 100. With DATING's
    // owner taken from any claim not done, a loser took the winner's generation for its own and
    // re-dated: a generation 2 below.) Each process completes a generation at most once: one done row,
    // two when the claims were stored in the order of the second test (seen once in a loaded CI run).
    const dating = await a.db.query<{ list_id: number; gens: number[]; dones: number; zones: string[] }>(
      `SELECT list_id, groupUniqArray(gen) AS gens, countIf(done = 1) AS dones, groupUniqArray(timezone) AS zones
       FROM list_dating WHERE list_id IN {lists:Array(UInt64)} GROUP BY list_id ORDER BY list_id`,
      { lists: all },
      INT,
    );
    expect(dating.map(({ dones, ...d }) => ({ ...d, completed: dones >= 1 && dones <= 2 }))).toEqual(
      all.map((id) => ({ list_id: id, gens: [1], zones: [zoneOf(id)], completed: true })),
    );

    // Every record once, in the generation read (1), on its day in the list's zone.
    const events = await a.db.query<{
      list_id: number;
      n: number;
      ids: number;
      gens: number[];
      days: string[];
    }>(
      `SELECT list_id, count() AS n, uniqExact(event_id) AS ids, groupUniqArray(gen) AS gens,
         groupUniqArray(toString(day)) AS days
       FROM events WHERE list_id IN {lists:Array(UInt64)} GROUP BY list_id ORDER BY list_id`,
      { lists: all },
      INT,
    );
    const day = (id: number) => (id % 2 ? '2026-11-11' : '2026-11-10');
    expect(events).toEqual(
      all.map((id) => ({
        list_id: id,
        n: 5,
        ids: 5,
        gens: [1],
        days: [day(id)],
      })),
    );
    // What readers add up: the daily sets of the current generation (no rebuild, no double build).
    const sets = await a.db.query<{ list_id: number; n: number }>(
      `SELECT list_id, sum(n) AS n FROM daily_sets
       WHERE list_id IN {lists:Array(UInt64)} AND gen = 1 AND type = 'send' GROUP BY list_id ORDER BY list_id`,
      { lists: all },
      INT,
    );
    expect(sets).toEqual(all.map((id) => ({ list_id: id, n: 5 })));
  });

  it('an earlier claim stored after a later one was read back alone: both complete it, nothing is rebuilt or lost', async () => {
    // Two stores on the one database stand for two processes (each names its claims with its instance).
    const first = new EventStore(a.db, 7);
    const second = new EventStore(b.db, 7);
    const [list, other] = [7000, 7001];
    const zone = zoneOf(list);
    // The second process's batch claim is stored and read back first: the only claim, it owns the list.
    const late = await second.redateAll([
      { listId: list, gen: 1, timeZone: zone },
      { listId: other, gen: 1, timeZone: zoneOf(other) },
    ]);
    expect(late.owned).toEqual([list, other]);
    // Then the first process's claim, made a second earlier (its `at`), is stored: the earliest claim.
    await a.db.command(
      `INSERT INTO list_dating (list_id, gen, timezone, done, owner, at)
       VALUES ({list:UInt64}, 1, {zone:String}, 0, {owner:String}, now64(6) - INTERVAL 1 SECOND)`,
      { list, zone, owner: first.instance },
    );
    const early = await first.redateAll([{ listId: list, gen: 1, timeZone: zone }]);
    expect(early).toEqual({ owned: [list], rebuilt: [] });
    expect(late.rebuilt).toEqual([]);

    // Generation 1 is done (twice: a done row each), in the catalog's zone; a write dates into it.
    const rows = await a.db.query<{ gen: number; done: number; timezone: string }>(
      'SELECT gen, done, timezone FROM list_dating WHERE list_id = {list:UInt64} AND done = 1 ORDER BY owner',
      { list },
      INT,
    );
    expect(rows).toEqual([
      { gen: 1, done: 1, timezone: zone },
      { gen: 1, done: 1, timezone: zone },
    ]);
    await b.pipeline.write(catalog([list, other], zoneOf));
    await b.pipeline.write(sends('x', [list], 2));
    const stored = await a.db.query<{ n: number; gens: number[] }>(
      'SELECT count() AS n, groupUniqArray(gen) AS gens FROM events WHERE list_id = {list:UInt64}',
      { list },
      INT,
    );
    expect(stored).toEqual([{ n: 2, gens: [1] }]);
  });

  it("a start-up recovery leaves a live process's claim made after it started to that process", async () => {
    // Process b is running (started above); then a claims a re-dating of one list (generation 2, in
    // progress), and a process that died before b started left a claim of another list. b's start-up
    // recovery ran at its start; it is run once more here to stand for one running late (a loaded machine).
    const [live, dead] = [7100, 7101];
    await a.pipeline.write(catalog([live, dead], zoneOf));
    const claimAt = async (list: number, owner: string, ago: string) =>
      a.db.command(
        `INSERT INTO list_dating (list_id, gen, timezone, done, owner, at)
         VALUES ({list:UInt64}, 2, {zone:String}, 0, {owner:String}, now64(6) - INTERVAL ${ago})`,
        { list, zone: zoneOf(list), owner },
      );
    await claimAt(live, 'a-live-instance', '0 SECOND');
    await claimAt(dead, 'a-dead-instance', '1 HOUR');
    await b.pipeline.recover();
    const rows = await a.db.query<{ list_id: number; gen: number; done: number; owner: string }>(
      `SELECT list_id, gen, max(done) AS done, any(owner) AS owner FROM list_dating
       WHERE list_id IN ({live:UInt64}, {dead:UInt64}) AND gen >= 2 GROUP BY list_id, gen ORDER BY list_id, gen`,
      { live, dead },
      INT,
    );
    // The live claim is still its owner's alone; the dead one's was taken over at once (generation 3).
    expect(rows.map(({ owner, ...r }) => ({ ...r, byB: !owner.startsWith('a-') }))).toEqual([
      { list_id: live, gen: 2, done: 0, byB: false },
      { list_id: dead, gen: 2, done: 0, byB: false },
      { list_id: dead, gen: 3, done: 1, byB: true },
    ]);
  });
});
