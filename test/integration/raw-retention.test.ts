// Modes: embedded only — raw-event retention (RAW_RETENTION_DAYS) on the engine in the test's process
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays, localDate } from '../../shared/dates.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

const USER = 3;
const KEY = 'retention-key';
const RETENTION = 30;
const DAYS = 90;
const OLD = 'Europe/Bucharest';
const NEW = 'America/New_York';
const LIST = 1;
const ERASED = 1;
const SHAPES = ['', '&workflow_ids=2', '&workflow_ids=1,3', '&workflow_ids=2&trigger_id=1'];

interface Rec {
  event_id: string;
  type: 'send' | 'open' | 'click';
  subscriber_id: number;
  workflow_id: number;
  trigger_id: number;
  timestamp: number;
}

/**
 * Activity on each of the last DAYS days, at 23:00 UTC: the next day in Bucharest, the same day in New
 * York, so a re-dating between the two moves every record by a day.
 */
function records(): Rec[] {
  const out: Rec[] = [];
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  for (let d = 2; d <= DAYS; d++)
    for (let s = 1; s <= 5; s++) {
      const base = {
        subscriber_id: s,
        workflow_id: (s % 3) + 1,
        trigger_id: (d % 2) + 1,
        timestamp: today - d * 86_400_000 + 23 * 3_600_000,
      };
      if ((d + s) % 2 === 0) out.push({ ...base, type: 'send', event_id: `s${d}-${s}` });
      if ((d * s) % 3 === 0) out.push({ ...base, type: 'open', event_id: `o${d}-${s}` });
      if ((d + s) % 5 === 0) out.push({ ...base, type: 'click', event_id: `c${d}-${s}` });
    }
  return out;
}

type Day = {
  date: string;
  sends_unique: number;
  sends_total: number;
  opens_unique: number;
  opens_total: number;
};

/**
 * The all-workflows answer's counters per day. `dated(r)`: the record's day; `keep(r)`: whether it
 * counts in totals; `unique(r)`: whether its subscriber counts in the unique sets.
 */
function expected(
  recs: Rec[],
  dated: (r: Rec) => string,
  keep: (r: Rec) => boolean,
  unique: (r: Rec) => boolean,
) {
  const days = new Map<string, { sends: Set<number>; opens: Set<number>; st: number; ot: number }>();
  for (const r of recs) {
    if (!keep(r)) continue;
    const date = dated(r);
    let d = days.get(date);
    if (!d) days.set(date, (d = { sends: new Set(), opens: new Set(), st: 0, ot: 0 }));
    if (r.type === 'send') {
      d.st++;
      if (unique(r)) d.sends.add(r.subscriber_id);
    }
    if (r.type === 'open') {
      d.ot++;
      if (unique(r)) d.opens.add(r.subscriber_id);
    }
  }
  return new Map(
    [...days].map(([date, d]) => [
      date,
      { date, sends_unique: d.sends.size, sends_total: d.st, opens_unique: d.opens.size, opens_total: d.ot },
    ]),
  );
}

/**
 * RAW_RETENTION_DAYS (docs/lifecycle.md "Retention"): the engine drops raw events past the retention;
 * every answer, old days included, is read from the derived state and stays what it was; an erasure
 * past retention still takes the subscriber out of every day's sets; a re-dating dates the retained
 * days again and keeps the older ones as they were.
 */
describe('raw-event retention', () => {
  let svc: TestService;
  const recs = records();
  const start = addDays(localDate(Date.now(), OLD), -(DAYS + 2));
  const stop = addDays(localDate(Date.now(), OLD), 1);
  const stats = async (extra = '') => {
    const r = await svc.call(
      `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${LIST}&start_date=${start}&stop_date=${stop}${extra}`,
    );
    expect(r.status).toBe(200);
    return r.body as (Day & Record<string, unknown>)[];
  };
  const all = async () =>
    (await stats()).map(({ date, sends_unique, sends_total, opens_unique, opens_total }) => ({
      date,
      sends_unique,
      sends_total,
      opens_unique,
      opens_total,
    }));
  /** The first day (previous zone) re-dated from raw records: two days past the retention's boundary. */
  const boundary = () => addDays(localDate(Date.now() - RETENTION * 86_400_000, OLD), 2);
  const rawCount = async () =>
    (
      await svc.db.query<{ n: number }>(
        'SELECT count() AS n FROM events',
        {},
        { output_format_json_quote_64bit_integers: 0 },
      )
    )[0]!.n;
  let before: Record<string, unknown[]>;

  beforeAll(async () => {
    svc = await startTestService({ RAW_RETENTION_DAYS: String(RETENTION) });
    await svc.recovered; // the retention is set by the start-up recovery
    expect(
      (await svc.ingest(tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST, timezone: OLD }] })))
        .status,
    ).toBe(200);
    const wire = recs.map((r) => ({ ...r, list_id: LIST }));
    expect((await svc.ingest(wire)).body).toMatchObject({ accepted: wire.length, rejected: [] });
  }, 300_000);
  afterAll(() => svc?.stop());

  it('the engine drops raw events past the retention; every answer, old days included, is unchanged', async () => {
    const [table] = await svc.db.query<{ q: string }>(
      "SELECT create_table_query AS q FROM system.tables WHERE database = currentDatabase() AND name = 'events'",
    );
    expect(table!.q).toMatch(/TTL .*coalesce\(sent_at, ts\).*toIntervalDay\(30\)/);
    before = {};
    for (const shape of SHAPES) before[shape] = await stats(shape);
    expect(await all()).toEqual(
      [
        ...expected(
          recs,
          (r) => localDate(r.timestamp, OLD),
          () => true,
          () => true,
        ).values(),
      ].sort((a, b) => a.date.localeCompare(b.date)),
    );
    const stored = await rawCount();
    // What the engine does in its background merges, now: the expired parts are dropped.
    await svc.db.command('ALTER TABLE events MATERIALIZE TTL', {}, { mutations_sync: '2' });
    await svc.db.command('OPTIMIZE TABLE events FINAL');
    const left = await rawCount();
    expect(left).toBeLessThan(stored); // whole months past the retention are gone
    const [oldest] = await svc.db.query<{ days: number }>(
      "SELECT dateDiff('day', min(ts), now()) AS days FROM events",
      {},
      { output_format_json_quote_64bit_integers: 0 },
    );
    expect(oldest!.days).toBeLessThanOrEqual(RETENTION + 31);
    svc.statsCache.bumpAll(); // read again from the engine, not from an answer held
    for (const shape of SHAPES) expect(await stats(shape)).toEqual(before[shape]);
  });

  it('an erasure past the retention takes the subscriber out of every day', async () => {
    const from = boundary();
    await svc.pipeline.erase([{ list_id: LIST, subscriber_id: ERASED }]);
    const old = (r: Rec) => localDate(r.timestamp, OLD) < from;
    // Retained days: as if the subscriber never arrived. Older days: out of every set; the totals of
    // those days keep the anonymous count of its records (no raw record is left to say which).
    const want = expected(
      recs,
      (r) => localDate(r.timestamp, OLD),
      (r) => r.subscriber_id !== ERASED || old(r),
      (r) => r.subscriber_id !== ERASED,
    );
    expect(await all()).toEqual([...want.values()].sort((a, b) => a.date.localeCompare(b.date)));
  });

  it('a re-dating past the retention dates the retained days again and keeps the older ones', async () => {
    const from = boundary();
    expect(
      (await svc.ingest([{ type: 'list', list_id: LIST, name: `list ${LIST}`, timezone: NEW }])).status,
    ).toBe(200);
    const old = (r: Rec) => localDate(r.timestamp, OLD) < from;
    // Older days keep their previous zone's date; the retained records are dated in the new zone. The
    // day before the boundary (the seam) holds both: its carried day and the new zone's hours of it.
    const want = expected(
      recs,
      (r) => (old(r) ? localDate(r.timestamp, OLD) : localDate(r.timestamp, NEW)),
      (r) => r.subscriber_id !== ERASED || old(r),
      (r) => r.subscriber_id !== ERASED,
    );
    expect(await all()).toEqual([...want.values()].sort((a, b) => a.date.localeCompare(b.date)));
    // Every retained day is the new zone's: records dated there move back a day.
    const seam = addDays(from, -1);
    const got = new Map((await all()).map((d) => [d.date, d]));
    const retained = expected(
      recs.filter((r) => !old(r)),
      (r) => localDate(r.timestamp, NEW),
      (r) => r.subscriber_id !== ERASED,
      () => true,
    );
    for (const [date, day] of retained) if (date > seam) expect(got.get(date)).toEqual(day);
  });
});
