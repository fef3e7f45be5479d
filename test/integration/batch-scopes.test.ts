// Modes: embedded and server
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRecord, type MailstatsRecord } from '../../shared/records/index.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * A batch's day recompute rewrites only the daily_scopes rows whose sets it changed (ARCHITECTURE.md,
 * "Storage"): the all-workflow row of each touched day and the rows of the workflows, (workflow,
 * trigger) pairs and triggers its records name. The rows it leaves keep their version and stay right.
 */
const LIST = 31;
const DAY = '2026-11-10';
let n = 0;
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
    await svc.pipeline.write([
      { type: 'list', list_id: LIST, name: 'scopes', timezone: 'UTC' } as MailstatsRecord,
    ]);
  });
  afterAll(() => svc?.stop());

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
    expect([...before.keys()].sort()).toEqual(['0/0', '0/10', '0/20', '1/0', '1/10', '2/0', '2/10', '2/20']);

    // Workflow 1, trigger 10 again, a known subscriber and a new one.
    await svc.pipeline.write([send(1, 10, 1), send(1, 10, 4)]);
    const after = await scopes();
    const rewritten = [...after].filter(([s, r]) => r.v !== before.get(s)?.v).map(([s]) => s);
    expect(rewritten.sort()).toEqual(['0/0', '0/10', '1/0', '1/10']);
    const sends = Object.fromEntries([...after].map(([s, r]) => [s, [r.u, r.t]]));
    expect(sends).toEqual({
      '0/0': [4, 5],
      '0/10': [3, 4],
      '0/20': [1, 1],
      '1/0': [2, 3],
      '1/10': [2, 3],
      '2/0': [2, 2],
      '2/10': [1, 1],
      '2/20': [1, 1],
    });
  });
});
