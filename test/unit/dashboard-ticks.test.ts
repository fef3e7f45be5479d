import { describe, expect, it } from 'vitest';
import { tickLabels } from '../../dashboard/src/ticks.js';
import { minus, totalsOf } from '../../dashboard/src/totals.js';
import type { StatsRecord } from '../../dashboard/src/stats.js';

const at = (date: string) => Date.parse(`${date}T00:00:00Z`) / 1000;

describe('chart ticks (issue 33, point 9)', () => {
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
  const rec = (over: Partial<StatsRecord>): StatsRecord =>
    ({
      sends_unique: 0,
      sends_total: 0,
      opens_unique: 0,
      opens_total: 0,
      clicks_unique: 0,
      clicks_total: 0,
      purchase_count: 0,
      purchases_value_ron: 0,
      purchases_value_eur: 0,
      bounce_total: 0,
      unsub_total: 0,
      spam_total: 0,
      events_ok: 0,
      events_failed: 0,
      conditions_ok: 0,
      conditions_failed: 0,
      actions_ok: 0,
      actions_failed: 0,
      date: '2026-11-01',
      ...over,
    }) as StatsRecord;
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
