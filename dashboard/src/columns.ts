import { format2, formatCents, formatInt } from './format.js';
import type { DAY_COLUMNS } from './stats.js';
import type { Totals } from './totals.js';

/**
 * The columns both tables show, in the API's field order, with their readable headers. One word, one
 * count, everywhere on the page: "(unique)" is distinct subscribers per day (over a period, the sum of
 * the days'), "(total)" is records; a rate names what it divides (docs/dashboard.md "Figures").
 */
export type DayColumn = (typeof DAY_COLUMNS)[number];

/** Distinct people over the period (automation.statsTotals, automation.statsByWorkflow). */
export const PEOPLE_COLUMNS = ['recipients', 'openers', 'clickers', 'buyers'] as const;
export type PeopleColumn = (typeof PEOPLE_COLUMNS)[number];
export type Column = DayColumn | PeopleColumn;

/**
 * The per-workflow table's columns when its rows come from automation.statsByWorkflow (one request for
 * every workflow): people first, then the counts of records and the money it answers.
 */
export const GROUPED_COLUMNS: readonly Column[] = [
  ...PEOPLE_COLUMNS,
  'opens_unique_percent',
  'clicks_unique_percent',
  'sends_total',
  'opens_total',
  'clicks_total',
  'purchase_count',
  'purchases_value_ron',
  'purchases_value_eur',
];

/** Headers of the columns that read otherwise when counted in people. */
export const PEOPLE_HEADERS: Partial<Record<Column, string>> = {
  opens_unique_percent: 'Open rate % (openers ÷ recipients)',
  clicks_unique_percent: 'Click rate % (clickers ÷ recipients)',
};

export const COLUMN_HEADERS: Record<Column, string> = {
  recipients: 'Recipients',
  openers: 'Openers',
  clickers: 'Clickers',
  buyers: 'Buyers',
  sends_unique: 'Sends (unique)',
  sends_total: 'Sends (total)',
  opens_unique: 'Opens (unique)',
  opens_total: 'Opens (total)',
  opens_unique_percent: 'Open rate % (unique opens ÷ unique sends)',
  clicks_unique: 'Clicks (unique)',
  clicks_total: 'Clicks (total)',
  clicks_unique_percent: 'Click rate % (unique clicks ÷ unique sends)',
  purchase_count: 'Purchases (total)',
  purchases_value_ron: 'Revenue RON',
  purchases_value_eur: 'Revenue EUR',
  purchases_value_aov_ron: 'AOV RON (revenue ÷ purchases)',
  purchases_value_aov_eur: 'AOV EUR (revenue ÷ purchases)',
  bounce_total: 'Bounces (total)',
  unsub_total: 'Unsubscribes (total)',
  spam_total: 'Spam (total)',
  events_ok: 'Events ok',
  events_failed: 'Events failed',
  conditions_ok: 'Conditions ok',
  conditions_failed: 'Conditions failed',
  actions_ok: 'Actions ok',
  actions_failed: 'Actions failed',
};

export type ColumnKind = 'count' | 'money' | 'rate' | 'aov';

export function kindOf(c: Column): ColumnKind {
  if (c === 'opens_unique_percent' || c === 'clicks_unique_percent') return 'rate';
  if (c === 'purchases_value_aov_ron' || c === 'purchases_value_aov_eur') return 'aov';
  if (c === 'purchases_value_ron' || c === 'purchases_value_eur') return 'money';
  return 'count';
}

/**
 * A column's value over a period's totals: a count, money in cents, a rate in %; null where a ratio
 * has nothing to divide by (a rate without sends, an AOV without purchases).
 */
export function totalsValue(t: Totals, c: Column): number | null {
  const people = t.people;
  switch (c) {
    case 'recipients':
    case 'openers':
    case 'clickers':
    case 'buyers':
      return people ? people[c] : null;
    // Counted in people where the answer has them (openers ÷ recipients), else in the days' uniques.
    case 'opens_unique_percent':
      if (people) return people.recipients === 0 ? null : people.openRate;
      return t.counts.sends_unique === 0 ? null : t.openRate;
    case 'clicks_unique_percent':
      if (people) return people.recipients === 0 ? null : people.clickRate;
      return t.counts.sends_unique === 0 ? null : t.clickRate;
    case 'purchases_value_ron':
      return t.revenueRonCents;
    case 'purchases_value_eur':
      return t.revenueEurCents;
    case 'purchases_value_aov_ron':
      return t.counts.purchase_count === 0 ? null : t.aovRonCents;
    case 'purchases_value_aov_eur':
      return t.counts.purchase_count === 0 ? null : t.aovEurCents;
    default:
      return t.counts[c];
  }
}

/** A totalsValue as shown: "—" for an undefined ratio. */
export function formatValue(v: number | null, kind: ColumnKind): string {
  if (v === null) return '—';
  return kind === 'count' ? formatInt(v) : kind === 'rate' ? format2(v) : formatCents(v);
}
