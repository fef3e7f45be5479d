import { dayNumber } from './period.js';
import type { DailyFrame } from './daily.js';
import type { StatsRecord } from './stats.js';
import { totalsOf } from './totals.js';

/**
 * Charts of long periods by week or month: each point the sum of its days' figures (counts and money),
 * its rates and AOV ratios of those sums (Σ unique opens ÷ Σ unique sends, Σ revenue ÷ Σ purchases). A
 * week's or month's unique count is a sum of days' unique counts, as every period figure on the page is
 * (docs/dashboard.md "Charts").
 */
export type Grouping = 'day' | 'week' | 'month';

/** The grouping a period is first shown in: days up to 92, weeks up to a year, months beyond. */
export const defaultGrouping = (days: number): Grouping =>
  days <= 92 ? 'day' : days <= 366 ? 'week' : 'month';

/** The first day of the week (Monday) or month holding `date`. */
export function groupStart(date: string, by: Grouping): string {
  if (by === 'month') return `${date.slice(0, 7)}-01`;
  if (by === 'week') {
    // 1970-01-01 was a Thursday: day numbers mod 7 put Monday at 4.
    const n = dayNumber(date);
    const back = (n + 3) % 7;
    return new Date((n - back) * 86_400_000).toISOString().slice(0, 10);
  }
  return date;
}

/** One record per group, as the API would answer one for it were it a day: sums, and ratios of sums. */
function recordOf(records: StatsRecord[], date: string): StatsRecord | undefined {
  if (records.length === 0) return undefined;
  const t = totalsOf(records);
  return {
    ...records[0]!,
    ...t.counts,
    date,
    purchases_value_ron: t.revenueRonCents / 100,
    purchases_value_eur: t.revenueEurCents / 100,
    purchases_value_aov_ron: t.aovRonCents / 100,
    purchases_value_aov_eur: t.aovEurCents / 100,
    opens_unique_percent: t.openRate,
    clicks_unique_percent: t.clickRate,
  };
}

export function groupFrame(f: DailyFrame, by: Grouping): DailyFrame {
  if (by === 'day') return f;
  const dates: string[] = [];
  const groups: StatsRecord[][] = [];
  f.dates.forEach((d, i) => {
    const start = groupStart(d, by);
    if (dates.at(-1) !== start) {
      dates.push(start);
      groups.push([]);
    }
    const r = f.records[i];
    if (r) groups.at(-1)!.push(r);
  });
  return { dates, records: groups.map((g, i) => recordOf(g, dates[i]!)) };
}
