/** automation.stats answer records (contract §2.4): the fields the dashboard reads. */
export interface StatsRecord {
  date: string;
  list_id: string;
  currency: string;
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
  formatted_revenue_ron: string;
  formatted_revenue_eur: string;
  purchases_value_aov_ron: number;
  purchases_value_aov_eur: number;
  formatted_value_aov_ron: string;
  formatted_value_aov_eur: string;
  opens_unique_percent: number;
  clicks_unique_percent: number;
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
