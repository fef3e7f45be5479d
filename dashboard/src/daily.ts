import { addDays, dayNumber, isDate } from './period.js';
import type { StatsRecord } from './stats.js';

/**
 * The API answers only the days with activity; a chart must show the whole period the page asked for,
 * day by day, in the list's calendar (docs/dashboard.md). A day without a record had nothing: its
 * counts and money are 0, while a ratio of nothing (AOV without purchases, a rate without sends) is
 * undefined — null, drawn as a gap, never as 0.
 */
export interface DailyFrame {
  /** Every calendar date from `from` to `to`, both included. */
  dates: string[];
  /** The API's record for each date, or undefined for a day without activity. */
  records: (StatsRecord | undefined)[];
}

/** At most this many days are laid out (the API's longest custom range is far shorter). */
const MAX_DAYS = 3700;

export function frameOf(records: readonly StatsRecord[], from: string, to: string): DailyFrame {
  if (!isDate(from) || !isDate(to) || to < from) return { dates: [], records: [] };
  const byDate = new Map(records.map((r) => [r.date, r]));
  const dates: string[] = [];
  for (let d = from; d <= to && dates.length < MAX_DAYS; d = addDays(d, 1)) dates.push(d);
  return { dates, records: dates.map((d) => byDate.get(d)) };
}

/** Seconds since the epoch at 00:00 UTC of each date: uPlot's x values (shown as written, in UTC). */
export const xsOf = (f: DailyFrame): number[] => f.dates.map((d) => dayNumber(d) * 86_400);

type CountKey =
  | 'sends_unique'
  | 'opens_unique'
  | 'clicks_unique'
  | 'purchase_count'
  | 'purchases_value_ron'
  | 'purchases_value_eur';

/** A count or an amount: 0 on a day without a record. */
export const countSeries = (f: DailyFrame, key: CountKey): number[] => f.records.map((r) => (r ? r[key] : 0));

/** AOV of a day: null (a gap) on a day without purchases. */
export const aovSeries = (f: DailyFrame, currency: 'ron' | 'eur'): (number | null)[] =>
  f.records.map((r) =>
    r && r.purchase_count > 0
      ? currency === 'ron'
        ? r.purchases_value_aov_ron
        : r.purchases_value_aov_eur
      : null,
  );

/** Unique open or click rate of a day, in %: null (a gap) on a day without sends. */
export const rateSeries = (f: DailyFrame, kind: 'opens' | 'clicks'): (number | null)[] =>
  f.records.map((r) =>
    r && r.sends_unique > 0 ? (kind === 'opens' ? r.opens_unique_percent : r.clicks_unique_percent) : null,
  );
