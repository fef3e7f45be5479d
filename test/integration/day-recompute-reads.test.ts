// Modes: embedded and server
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECOMPUTE_BATCH_SELECT } from '../../shared/clickhouse/event-store.js';
import { checkRecord, type MailstatsRecord } from '../../shared/records/index.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * A batch's day recompute reads the sets of the days it touched, not the list's history (ARCHITECTURE.md,
 * "Storage"): daily_sets is sorted by workflow before day, so without a second order a touched day of
 * a list meant reading every row of that list in the day's month, and at 100M records a write of 25,000
 * today's records read the whole month (BENCHMARKS.md, Growth). Here one list has 30 days (one
 * month) × 300 workflows × 3 types of sets (27,000 rows, four granules of the engine's 8,192 rows); a write of one
 * record recomputes its day reading at most the granule or two that hold that day.
 */
const USER = 41;
const KEY = 'day-recompute-reads-key';
const LIST = 41;
const DAYS = 30;
const WORKFLOWS = 300;
/** November 2025: every day in one partition (a month) of daily_sets. */
const FIRST = Date.UTC(2025, 10, 1);
let n = 0;
const record = (type: 'send' | 'open' | 'click', day: number, workflow: number, subscriber: number): MailstatsRecord => {
  const check = checkRecord({
    type,
    event_id: `drr-${++n}`,
    list_id: LIST,
    workflow_id: workflow,
    trigger_id: 1 + (workflow % 3),
    subscriber_id: subscriber,
    timestamp: FIRST + day * 86_400_000 + 36_000_000,
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
      .slice(i + 1, i + 4)
      .map((l) => /Parts: \d+ \| Granules: (\d+)/.exec(l)?.[1])
      .find(Boolean);
    out.push({ from, granules: Number(granules) });
  }
  return out;
};

describe('the day recompute of a write', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    const setup = await svc.ingest(
      tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST, timezone: 'UTC' }] }),
    );
    expect(setup.body.rejected).toEqual([]);
    const history: MailstatsRecord[] = [];
    for (let day = 0; day < DAYS; day++)
      for (let w = 1; w <= WORKFLOWS; w++)
        for (const type of ['send', 'open', 'click'] as const) history.push(record(type, day, w, day * 1000 + w));
    for (let i = 0; i < history.length; i += 20_000) await svc.pipeline.write(history.slice(i, i + 20_000));
    await svc.db.command('OPTIMIZE TABLE daily_sets FINAL');
  }, 300_000);
  afterAll(() => svc?.stop());

  it('reads only the touched day of a list with a long history', async () => {
    const [table] = await svc.db.query<{ rows: number; marks: number }>(
      `SELECT sum(rows) AS rows, sum(marks) AS marks FROM system.parts
       WHERE database = currentDatabase() AND table = 'daily_sets' AND active`,
      {},
      { output_format_json_quote_64bit_integers: 0 },
    );
    expect(table!.rows).toBe(DAYS * WORKFLOWS * 3);
    expect(table!.marks).toBeGreaterThanOrEqual(4);

    await svc.pipeline.write([record('send', 20, 7, 999_999)]);
    const [batch] = await svc.db.query<{ id: string }>(
      `SELECT batch_id AS id FROM ingest_batches ORDER BY created DESC, batch_id LIMIT 1`,
    );
    const plan = await svc.db.query<{ explain: string }>(`EXPLAIN indexes = 1 ${RECOMPUTE_BATCH_SELECT}`, {
      batch: batch!.id,
    });
    const steps = reads(plan.map((r) => r.explain));
    // The three parts: all workflows, the record's workflow, its trigger.
    expect(steps).toHaveLength(3);
    for (const step of steps) expect(step.granules, JSON.stringify(steps)).toBeLessThanOrEqual(2);

    // And the day's answer is the history's day plus the new subscriber.
    const day = new Date(FIRST + 20 * 86_400_000).toISOString().slice(0, 10);
    const res = await svc.call(
      `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${LIST}&start_date=${day}&stop_date=${day}`,
    );
    expect(res.status).toBe(200);
    expect(res.body[0]).toMatchObject({ sends_unique: WORKFLOWS + 1, sends_total: WORKFLOWS + 1 });
  });
});
