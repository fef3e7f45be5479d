import { describe, expect, it } from 'vitest';
import type { DayCounters } from '../../shared/clickhouse/schema.js';
import { SCOPE_COUNTERS } from '../../shared/clickhouse/schema.js';
import { packSets, subsetDays } from '../../query-api/stats/subset-days.js';

const day = (date: string, over: Partial<DayCounters> = {}): DayCounters => ({
  ...(Object.fromEntries(SCOPE_COUNTERS.map((c) => [c, 1])) as Record<
    (typeof SCOPE_COUNTERS)[number],
    number
  >),
  date,
  value_ron: '0',
  value_eur: '0',
  ...over,
});

describe('a workflow subset answered from held rows and sets', () => {
  const scopes = new Map<string, DayCounters[]>([
    ['1|0', [day('2026-11-01', { value_ron: '900000000000.0001' }), day('2026-11-03')]],
    ['2|0', [day('2026-11-01', { value_ron: '900000000000.0001', value_eur: '0.5' })]],
    ['3|0', [day('2026-11-02')]],
  ]);
  const ids = (workflow: number, date: string, type: 'send' | 'open' | 'click', list: number[]) => ({
    workflow_id: workflow,
    trigger_id: 0,
    date,
    type,
    ids: list,
  });

  it('sums totals and money exactly (past 2^53 units too) and counts each subscriber once per day', async () => {
    const sets = await packSets([
      ids(1, '2026-11-01', 'send', [9007199254740991, 5, 7]),
      ids(2, '2026-11-01', 'send', [7, 9007199254740991, 8]),
      ids(2, '2026-11-01', 'click', [3]),
      ids(1, '2026-11-03', 'open', [5]),
    ]);
    const q = { listId: 1, triggerId: null, from: '2026-11-01', to: '2026-11-03' };
    const answer = subsetDays(scopes, sets, { ...q, workflowIds: [1, 2, 1] });
    expect(answer.map((d) => d.date)).toEqual(['2026-11-01', '2026-11-03']);
    expect(answer[0]).toMatchObject({
      sends_unique: 4,
      clicks_unique: 1,
      opens_unique: 0,
      sends_total: 2,
      value_ron: '1800000000000.0002',
      value_eur: '0.5000',
    });
    expect(answer[1]).toMatchObject({ opens_unique: 1, sends_unique: 0, value_ron: '0.0000' });
    // A period that leaves the first day out; a workflow the list does not have adds nothing.
    expect(subsetDays(scopes, sets, { ...q, from: '2026-11-02', workflowIds: [2, 3, 99] })).toEqual([
      {
        ...day('2026-11-02'),
        value_ron: '0.0000',
        value_eur: '0.0000',
        sends_unique: 0,
        opens_unique: 0,
        clicks_unique: 0,
      },
    ]);
  });

  it('counts a union of three or more runs exactly, every time past the byte marks wrapping', async () => {
    // Workflow 3 repeats one of 1's subscribers and one of 2's, and has one of its own; 4 repeats all.
    const sets = await packSets([
      ids(1, '2026-11-01', 'send', [10, 11, 12]),
      ids(2, '2026-11-01', 'send', [12, 13]),
      ids(3, '2026-11-01', 'send', [11, 13, 14]),
      ids(4, '2026-11-01', 'send', [10, 11, 12, 13, 14]),
      ids(1, '2026-11-01', 'open', [10]),
      ids(3, '2026-11-01', 'open', [10]),
    ]);
    const scopes4 = new Map([1, 2, 3, 4].map((w) => [`${w}|0`, [day('2026-11-01')]]));
    const q = { listId: 1, triggerId: null, from: '2026-11-01', to: '2026-11-01' };
    // 300 answers of two unions each: the marks' epoch wraps (a byte) twice.
    for (let i = 0; i < 300; i++) {
      const [three] = subsetDays(scopes4, sets, { ...q, workflowIds: [1, 2, 3] });
      expect(three).toMatchObject({ sends_unique: 5, opens_unique: 1, clicks_unique: 0 });
      const [pair] = subsetDays(scopes4, sets, { ...q, workflowIds: [2, 4] });
      expect(pair).toMatchObject({ sends_unique: 5, opens_unique: 0 });
      const [one] = subsetDays(scopes4, sets, { ...q, workflowIds: [3, 99] });
      expect(one).toMatchObject({ sends_unique: 3, opens_unique: 1 });
    }
  });
});
