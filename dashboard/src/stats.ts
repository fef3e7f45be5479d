/**
 * One element of the automation.stats answer (docs/api.md), as the page reads it. Written here rather
 * than imported so that the page depends on no server code; test/unit/dashboard-stats-type.test.ts
 * checks that it stays the server's record.
 */
export interface StatsRecord {
  sends_unique: number;
  sends_total: number;
  opens_unique: number;
  opens_total: number;
  clicks_unique: number;
  clicks_total: number;
  purchase_count: number;
  purchases_value_ron: number;
  purchases_value_eur: number;
  bounce_total: number;
  unsub_total: number;
  spam_total: number;
  events_ok: number;
  events_failed: number;
  conditions_ok: number;
  conditions_failed: number;
  actions_ok: number;
  actions_failed: number;
  date: string;
  currency: string;
  formatted_revenue_ron: string;
  formatted_revenue_eur: string;
  purchases_value_aov_ron: number;
  formatted_value_aov_ron: string;
  purchases_value_aov_eur: number;
  formatted_value_aov_eur: string;
  opens_unique_percent: number;
  clicks_unique_percent: number;
  list_id: string;
}

/** Counters that add up over days. */
export const COUNT_FIELDS = [
  'sends_unique',
  'sends_total',
  'opens_unique',
  'opens_total',
  'clicks_unique',
  'clicks_total',
  'purchase_count',
  'bounce_total',
  'unsub_total',
  'spam_total',
  'events_ok',
  'events_failed',
  'conditions_ok',
  'conditions_failed',
  'actions_ok',
  'actions_failed',
] as const;
export type CountField = (typeof COUNT_FIELDS)[number];

/** The numeric columns of the table of days and of its CSV, in the API's field names and order. */
export const DAY_COLUMNS = [
  'sends_unique',
  'sends_total',
  'opens_unique',
  'opens_total',
  'opens_unique_percent',
  'clicks_unique',
  'clicks_total',
  'clicks_unique_percent',
  'purchase_count',
  'purchases_value_ron',
  'purchases_value_eur',
  'purchases_value_aov_ron',
  'purchases_value_aov_eur',
  'bounce_total',
  'unsub_total',
  'spam_total',
  'events_ok',
  'events_failed',
  'conditions_ok',
  'conditions_failed',
  'actions_ok',
  'actions_failed',
] as const satisfies readonly (keyof StatsRecord)[];
