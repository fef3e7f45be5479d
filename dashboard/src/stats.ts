import type { StatsRecord, StatsTotals } from '../../query-api/stats/record.js';

/**
 * automation.stats answer records (docs/api.md "Answer") and the automation.statsTotals answer (the
 * period's exact money): the server's own types (type-only: nothing is bundled).
 */
export type { StatsRecord, StatsTotals };

/**
 * Spam complaints, then the workflow steps' outcomes: the same run of counters at the end of the
 * counters that add up and of the day columns.
 */
const SPAM_AND_STEP_COUNTS = [
  'spam_total',
  'events_ok',
  'events_failed',
  'conditions_ok',
  'conditions_failed',
  'actions_ok',
  'actions_failed',
] as const satisfies readonly (keyof StatsRecord)[];

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
  ...SPAM_AND_STEP_COUNTS,
] as const;
export type CountField = (typeof COUNT_FIELDS)[number];

/** Purchases, then bounces and unsubscribes: a run of the day columns. */
export const PURCHASE_AND_LOSS_COLUMNS = [
  'purchase_count',
  'purchases_value_ron',
  'purchases_value_eur',
  'purchases_value_aov_ron',
  'purchases_value_aov_eur',
  'bounce_total',
  'unsub_total',
] as const satisfies readonly (keyof StatsRecord)[];

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
  ...PURCHASE_AND_LOSS_COLUMNS,
  ...SPAM_AND_STEP_COUNTS,
] as const satisfies readonly (keyof StatsRecord)[];
