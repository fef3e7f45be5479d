import { format2, formatCents, formatInt } from './format.js';
import type { DAY_COLUMNS } from './stats.js';
import type { Totals } from './totals.js';

/** The columns both tables show, in the API's field order, with their readable headers. */
export type Column = (typeof DAY_COLUMNS)[number];

export const COLUMN_HEADERS: Record<Column, string> = {
  sends_unique: 'Sends (unique)',
  sends_total: 'Sends',
  opens_unique: 'Opens (unique)',
  opens_total: 'Opens',
  opens_unique_percent: 'Open rate %',
  clicks_unique: 'Clicks (unique)',
  clicks_total: 'Clicks',
  clicks_unique_percent: 'Click rate %',
  purchase_count: 'Purchases',
  purchases_value_ron: 'Revenue RON',
  purchases_value_eur: 'Revenue EUR',
  purchases_value_aov_ron: 'AOV RON',
  purchases_value_aov_eur: 'AOV EUR',
  bounce_total: 'Bounces',
  unsub_total: 'Unsubscribes',
  spam_total: 'Spam',
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
  switch (c) {
    case 'opens_unique_percent':
      return t.counts.sends_unique === 0 ? null : t.openRate;
    case 'clicks_unique_percent':
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
