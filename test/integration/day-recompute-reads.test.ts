// Modes: embedded and server
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECOMPUTE_BATCH_SELECT } from '../../shared/clickhouse/event-store.js';
import { checkRecord, type MailstatsRecord } from '../../shared/records/index.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * A batch's day recompute reads the sets of the recent days it touched from recent_sets, sorted by day,
 * not the list's month from daily_sets (ARCHITECTURE.md, "Storage"): daily_sets is sorted by workflow
 * before day, so a touched day of a list meant reading every row of that list in the day's month, and
 * at 100M records a write of 25,000 today's records read a whole month (BENCHMARKS.md, Growth). Here one
 * list has 30 days up to yesterday × 300 workflows × 3 types of sets (27,000 rows, four granules of the
 * engine's 8,192 rows); a write of one record of yesterday recomputes its day reading a granule or two of
 * recent_sets and nothing of daily_sets; one of a day a month ago still reads daily_sets, and both
 * answers are right.
 */
const USER = 41;
const KEY = 'day-recompute-reads-key';
const LIST = 41;
const DAYS = 30;
const WORKFLOWS = 300;
const DAY_MS = 86_400_000;
/** Day 0 is 29 days before yesterday (UTC, the list's zone): day 29 is yesterday. */
const FIRST = Math.floor(Date.now() / DAY_MS) * DAY_MS - DAYS * DAY_MS;
const dateOf = (day: number) => new Date(FIRST + day * DAY_MS).toISOString().slice(0, 10);
let n = 0;
const record = (
  type: 'send' | 'open' | 'click',
  day: number,
  workflow: number,
  subscriber: number,
): MailstatsRecord => {
  const check = checkRecord({
    type,
    event_id: `drr-${++n}`,
    list_id: LIST,
    workflow_id: workflow,
    trigger_id: 1 + (workflow % 3),
    subscriber_id: subscriber,
    timestamp: FIRST + day * DAY_MS + 36_000_000,
  });
  if (!check.ok) throw new Error(check.reason);
  return check.record;
};

/** Per ReadFromMergeTree step of an `EXPLAIN indexes = 1`: what it reads from and how many granules. */
const reads = (plan: string[]) => {
  const out: { from: string; granules: number }[] = [];
  for (const [i, line] of plan.entries()) {
    const from = /ReadFromMergeTree \(([^)]+)\)/.exec(line)?.[1];
    if (!from) continue;
    const granules = plan
      .slice(i + 1)
      .map((l) => /Parts: \d+\/\d+ *\n? *Granules: (\d+)\/\d+|Granules: (\d+)/.exec(l))
      .find(Boolean);
    out.push({ from: from.replace(/^.*\./, ''), granules: Number(granules?.[1] ?? granules?.[2] ?? NaN) });
  }
  return out;
};

describe('the day recompute of a write', () => {
  let svc: TestService;
  const stats = async (day: number) => {
    const res = await svc.call(
      `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${LIST}&start_date=${dateOf(day)}&stop_date=${dateOf(day)}`,
    );
    expect(res.status).toBe(200);
    return res.body[0];
  };
  /** The recompute of the write that stored `r`, explained. */
  const explainBatchOf = async (r: MailstatsRecord) => {
    const [batch] = await svc.db.query<{ id: string }>(
      `SELECT batch_id AS id FROM ingest_batches WHERE event_id = {id:String}`,
      { id: 'event_id' in r ? r.event_id : '' },
    );
    const plan = await svc.db.query<{ explain: string }>(`EXPLAIN indexes = 1 ${RECOMPUTE_BATCH_SELECT}`, {
      batch: batch!.id,
    });
    return plan.map((r) => r.explain);
  };
  beforeAll(async () => {
    svc = await startTestService();
    const setup = await svc.ingest(
      tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST, timezone: 'UTC' }] }),
    );
    expect(setup.body.rejected).toEqual([]);
    const history: MailstatsRecord[] = [];
    for (let day = 0; day < DAYS; day++)
      for (let w = 1; w <= WORKFLOWS; w++)
        for (const type of ['send', 'open', 'click'] as const)
          history.push(record(type, day, w, day * 1000 + w));
    for (let i = 0; i < history.length; i += 20_000) await svc.pipeline.write(history.slice(i, i + 20_000));
    await svc.db.command('OPTIMIZE TABLE daily_sets FINAL');
    await svc.db.command('OPTIMIZE TABLE recent_sets FINAL');
  }, 300_000);
  afterAll(() => svc?.stop());

  it('reads only the touched recent day of a list with a long history', async () => {
    const [table] = await svc.db.query<{ rows: number; marks: number }>(
      `SELECT sum(rows) AS rows, sum(marks) AS marks FROM system.parts
       WHERE database = currentDatabase() AND table = 'daily_sets' AND active`,
      {},
      { output_format_json_quote_64bit_integers: 0 },
    );
    expect(table!.rows).toBe(DAYS * WORKFLOWS * 3);
    expect(table!.marks).toBeGreaterThanOrEqual(4);

    const latest = record('send', DAYS - 1, 7, 999_999);
    await svc.pipeline.write([latest]);
    const plan = await explainBatchOf(latest);
    const steps = reads(plan);
    // The three parts (all workflows, the record's workflow, its trigger), each from both tables.
    expect(
      steps.filter((s) => s.from === 'recent_sets'),
      plan.join('\n'),
    ).toHaveLength(3);
    for (const step of steps)
      expect(step.granules, JSON.stringify(steps)).toBeLessThanOrEqual(step.from === 'recent_sets' ? 2 : 0);

    // And the day's answer is the history's day plus the new subscriber.
    expect(await stats(DAYS - 1)).toMatchObject({ sends_unique: WORKFLOWS + 1, sends_total: WORKFLOWS + 1 });
  });

  it('a day older than recent_sets keeps is recomputed from daily_sets', async () => {
    const old = record('send', 3, 7, 999_998);
    await svc.pipeline.write([old]);
    const steps = reads(await explainBatchOf(old));
    expect(steps.filter((s) => s.from === 'daily_sets' && s.granules > 0).length).toBeGreaterThan(0);
    for (const step of steps.filter((s) => s.from === 'recent_sets')) expect(step.granules).toBe(0);
    expect(await stats(3)).toMatchObject({ sends_unique: WORKFLOWS + 1, sends_total: WORKFLOWS + 1 });
    expect(await stats(DAYS - 1)).toMatchObject({ sends_unique: WORKFLOWS + 1 });
  });
});
