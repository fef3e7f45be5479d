import { describe, expect, it } from 'vitest';
import { aovSeries, countSeries, frameOf, rateSeries, xsOf } from '../../dashboard/src/daily.js';
import type { StatsRecord } from '../../dashboard/src/stats.js';

/** Sparse API answers (days with activity only) laid out over the whole period the page asked for. */
const rec = (date: string, over: Partial<StatsRecord>): StatsRecord =>
  ({
    date,
    sends_unique: 0,
    opens_unique: 0,
    clicks_unique: 0,
    purchase_count: 0,
    purchases_value_ron: 0,
    purchases_value_eur: 0,
    purchases_value_aov_ron: 0,
    purchases_value_aov_eur: 0,
    opens_unique_percent: 0,
    clicks_unique_percent: 0,
    ...over,
  }) as StatsRecord;

describe('dashboard daily frame', () => {
  // 02.11, 10.11 and 20.11 only: not "steady sending" from 02.11 to 20.11.
  const records = [
    rec('2026-11-02', { sends_unique: 4, opens_unique: 2, opens_unique_percent: 50 }),
    rec('2026-11-10', { purchase_count: 2, purchases_value_ron: 300, purchases_value_aov_ron: 150 }),
    rec('2026-11-20', { sends_unique: 10, opens_unique: 1, opens_unique_percent: 10 }),
  ];
  const f = frameOf(records, '2026-11-01', '2026-11-30');

  it('has every day of the period, from its first day', () => {
    expect(f.dates).toHaveLength(30);
    expect(f.dates[0]).toBe('2026-11-01');
    expect(f.dates.at(-1)).toBe('2026-11-30');
    expect(xsOf(f)[1]! - xsOf(f)[0]!).toBe(86_400);
  });

  it('counts are 0 on days without a record', () => {
    const sends = countSeries(f, 'sends_unique');
    expect(sends.filter((v) => v !== 0)).toEqual([4, 10]);
    expect(sends[1]).toBe(4);
    expect(sends[19]).toBe(10);
    expect(sends[5]).toBe(0);
  });

  it('AOV and rates are gaps (null) where nothing was bought or sent, not 0', () => {
    const aov = aovSeries(f, 'ron');
    expect(aov[9]).toBe(150);
    expect(aov.filter((v) => v !== null)).toEqual([150]);
    const rate = rateSeries(f, 'opens');
    expect(rate[1]).toBe(50);
    expect(rate[19]).toBe(10);
    // 10.11 had a purchase but no sends: its rate is undefined.
    expect(rate[9]).toBeNull();
    expect(rate.filter((v) => v !== null)).toEqual([50, 10]);
  });

  it('a reversed or invalid range has no days', () => {
    expect(frameOf(records, '2026-11-30', '2026-11-01').dates).toEqual([]);
    expect(frameOf(records, 'x', '2026-11-01').dates).toEqual([]);
  });
});
