// Modes: embedded and server
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRecord, type MailstatsRecord } from '../../shared/records/index.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * A batch's day recompute rewrites only the daily_scopes rows whose sets it changed (ARCHITECTURE.md,
 * "Storage"): the all-workflow row of each touched day and the rows of the workflows and triggers its
 * records name. The rows it leaves keep their version and stay right. No (workflow, trigger) rows: that
 * shape is answered from daily_sets, and a store's older such rows are never read.
 */
const USER = 31;
const KEY = 'batch-scopes-key';
const LIST = 31;
const DAY = '2026-11-10';
let n = 0;
/** The stored shapes of the day after both batches: all, per workflow, per trigger. */
const EXPECTED_SCOPES = { '0/0': [4, 5], '0/10': [3, 4], '0/20': [1, 1], '1/0': [2, 3], '2/0': [2, 2] };
/** Every shape's answer, the (workflow, trigger) ones included. */
const EXPECTED = { ...EXPECTED_SCOPES, '1/10': [2, 3], '2/10': [1, 1], '2/20': [1, 1] };
const send = (workflow: number, trigger: number, subscriber: number): MailstatsRecord => {
  const check = checkRecord({
    type: 'send',
    event_id: `bs-${++n}`,
    list_id: LIST,
    workflow_id: workflow,
    trigger_id: trigger,
    subscriber_id: subscriber,
    timestamp: `${DAY}T10:00:00Z`,
  });
  if (!check.ok) throw new Error(check.reason);
  return check.record;
};

describe('day recompute of a batch', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    const setup = await svc.ingest(
      tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST, timezone: 'UTC' }] }),
    );
    expect(setup.body.rejected).toEqual([]);
  });
  afterAll(() => svc?.stop());

  /** The day's unique and total sends of a `workflow/trigger` shape (0: all / any), as the API answers. */
  const sendsOf = async (shape: string) => {
    const [w, t] = shape.split('/').map(Number);
    const extra = `${w ? `&workflow_ids=${w}` : ''}${t ? `&trigger_id=${t}` : ''}`;
    const res = await svc.call(
      `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${LIST}&start_date=${DAY}&stop_date=${DAY}${extra}`,
    );
    expect(res.status).toBe(200);
    const days = res.body as { sends_unique: number; sends_total: number }[];
    expect(days).toHaveLength(1);
    return [days[0]!.sends_unique, days[0]!.sends_total];
  };

  /** Per `workflow/trigger` scope of the day: its newest version and its unique and total sends. */
  const scopes = async () => {
    const rows = await svc.db.query<{ s: string; v: string; u: number; t: number }>(
      `SELECT concat(toString(workflow_id), '/', toString(trigger_id)) AS s, toString(version) AS v,
         sends_unique AS u, sends_total AS t
       FROM daily_scopes FINAL WHERE list_id = {list:UInt64} AND day = {day:Date}`,
      { list: LIST, day: DAY },
      { output_format_json_quote_64bit_integers: 0 },
    );
    return new Map(rows.map((r) => [r.s, r]));
  };

  it('rewrites the scopes the batch touched, keeps the others, and every scope stays exact', async () => {
    await svc.pipeline.write([send(1, 10, 1), send(2, 20, 2), send(2, 10, 3)]);
    const before = await scopes();
    expect([...before.keys()].sort()).toEqual(['0/0', '0/10', '0/20', '1/0', '2/0']);

    // Workflow 1, trigger 10 again, a known subscriber and a new one.
    await svc.pipeline.write([send(1, 10, 1), send(1, 10, 4)]);
    const after = await scopes();
    const rewritten = [...after].filter(([s, r]) => r.v !== before.get(s)?.v).map(([s]) => s);
    expect(rewritten.sort()).toEqual(['0/0', '0/10', '1/0']);
    const sends = Object.fromEntries([...after].map(([s, r]) => [s, [r.u, r.t]]));
    expect(sends).toEqual(EXPECTED_SCOPES);
    // Every shape still answers, the (workflow, trigger) ones from the sets.
    for (const [shape, [u, t]] of Object.entries(EXPECTED))
      expect(await sendsOf(shape), shape).toEqual([u, t]);
  });

  it('answers a (workflow, trigger) shape from the sets, not from a row an older store precomputed', async () => {
    // As an older version's recompute left it (and then wrong, to show it is not read).
    await svc.db.command(
      `INSERT INTO daily_scopes (list_id, workflow_id, trigger_id, day, gen, sends_unique, sends_total, version)
       VALUES ({list:UInt64}, 1, 10, {day:Date}, 0, 99, 99, 18446744073709551615)`,
      { list: LIST, day: DAY },
    );
    svc.statsCache.enabled = false;
    try {
      // Twice: the engine answers the first, the rows held in memory (read after it) the second.
      for (let round = 0; round < 2; round++) {
        for (const [shape, [u, t]] of Object.entries(EXPECTED)) {
          expect(await sendsOf(shape), `${shape}, round ${round}`).toEqual([u, t]);
        }
        await svc.dayRows?.settled();
      }
    } finally {
      svc.statsCache.enabled = true;
    }
  });

  it('re-dating writes the same shapes as the batches did', async () => {
    const res = await svc.ingest([
      { type: 'list', list_id: LIST, name: 'scopes', timezone: 'Europe/Bucharest', version: 5 },
    ]);
    expect(res.body.rejected).toEqual([]);
    const rows = await svc.db.query<{ s: string; u: number; t: number }>(
      `SELECT concat(toString(workflow_id), '/', toString(trigger_id)) AS s, sends_unique AS u, sends_total AS t
       FROM daily_scopes FINAL
       WHERE list_id = {list:UInt64} AND day = {day:Date}
         AND gen = (SELECT max(gen) FROM list_dating WHERE list_id = {list:UInt64} AND done = 1)`,
      { list: LIST, day: DAY },
      { output_format_json_quote_64bit_integers: 0 },
    );
    expect(Object.fromEntries(rows.map((r) => [r.s, [r.u, r.t]]))).toEqual(EXPECTED_SCOPES);
    for (const [shape, [u, t]] of Object.entries(EXPECTED))
      expect(await sendsOf(shape), shape).toEqual([u, t]);
  });
});
