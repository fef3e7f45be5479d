import { describe, expect, it } from 'vitest';
import { frameOf } from '../../dashboard/src/daily.js';
import { groupFrame, groupStart } from '../../dashboard/src/grouping.js';
import { tickLabels } from '../../dashboard/src/ticks.js';
import { minus, totalsOf } from '../../dashboard/src/totals.js';
import type { StatsRecord } from '../../dashboard/src/stats.js';
import { day } from '../support/stats-record.js';

const at = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000;

describe('chart ticks', () => {
  it('a range within a year: the year on the first tick and where it changes', () => {
    expect(tickLabels(['2025-11-01', '2025-12-01', '2026-01-01', '2026-02-01'].map(at))).toEqual([
      '2025-11-01',
      '12-01',
      '2026-01-01',
      '02-01',
    ]);
  });
  it('over more than a year every tick names its year (no "01-01 … 01-01")', () => {
    const labels = tickLabels(['2025-01-01', '2025-07-01', '2026-01-01', '2026-07-01'].map(at));
    expect(labels).toEqual(['2025-01-01', '2025-07-01', '2026-01-01', '2026-07-01']);
    expect(new Set(labels).size).toBe(labels.length);
  });
});

describe('"other workflows": all workflows less the named ones', () => {
  const rec = (over: Partial<StatsRecord>): StatsRecord => day('2026-11-01', over);
  it('counts and money split exactly, and its AOV is its own revenue ÷ its own purchases', () => {
    const all = totalsOf([
      rec({ sends_total: 10, sends_unique: 8, purchase_count: 3, purchases_value_ron: 10100.5 }),
    ]);
    const named = totalsOf([
      rec({ sends_total: 9, sends_unique: 8, purchase_count: 2, purchases_value_ron: 100.5 }),
    ]);
    const other = minus(all, named);
    expect(other.counts.sends_total).toBe(1);
    expect(other.counts.sends_unique).toBe(0);
    expect(other.revenueRonCents).toBe(1_000_000);
    expect(other.aovRonCents).toBe(1_000_000);
  });
});

const zero = Object.fromEntries(
  [
    'sends_unique',
    'sends_total',
    'opens_unique',
    'opens_total',
    'clicks_unique',
    'clicks_total',
    'purchase_count',
    'purchases_value_ron',
    'purchases_value_eur',
    'bounce_total',
    'unsub_total',
    'spam_total',
    'events_ok',
    'events_failed',
    'conditions_ok',
    'conditions_failed',
    'actions_ok',
    'actions_failed',
  ].map((k) => [k, 0]),
) as unknown as StatsRecord;

describe('charts by week and month', () => {
  it('weeks start on Monday, months on the 1st', () => {
    expect(groupStart('2026-11-27', 'week')).toBe('2026-11-23'); // a Friday → its Monday
    expect(groupStart('2026-11-23', 'week')).toBe('2026-11-23');
    expect(groupStart('2026-11-22', 'week')).toBe('2026-11-16'); // a Sunday
    expect(groupStart('2026-11-27', 'month')).toBe('2026-11-01');
  });
  it('a month is the sum of its days; its rate a ratio of the sums; a month without activity is a gap', () => {
    const day = (date: string, sends: number, opens: number, ron: number): any => ({
      date,
      sends_unique: sends,
      opens_unique: opens,
      purchase_count: ron > 0 ? 1 : 0,
      purchases_value_ron: ron,
    });
    const records = [
      day('2026-01-30', 3, 1, 10.01),
      day('2026-01-31', 1, 1, 0.02),
      day('2026-03-02', 2, 1, 0),
    ];
    const frame = frameOf(
      records.map((r) => ({ ...zero, ...r })),
      '2026-01-30',
      '2026-03-02',
    );
    const months = groupFrame(frame, 'month');
    expect(months.dates).toEqual(['2026-01-01', '2026-02-01', '2026-03-01']);
    expect(months.records[1]).toBeUndefined();
    expect(months.records[0]!.sends_unique).toBe(4);
    expect(months.records[0]!.purchases_value_ron).toBe(10.03);
    expect(months.records[0]!.opens_unique_percent).toBe(50);
    expect(months.records[2]!.opens_unique_percent).toBe(50);
  });
});
