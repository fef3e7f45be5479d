import type { StatsRecord, StatsTotals } from '../../query-api/stats/record.js';

/**
 * automation.stats answer records (docs/api.md "Answer") and the automation.statsTotals answer (the
 * period's exact money): the server's own types (type-only: nothing is bundled).
 */
export type { StatsRecord, StatsTotals };

/** An alert of automation.statsTotals (docs/api.md "automation.statsTotals"): shown under "Needs a look". */
export interface StatsAlert {
  kind: 'spam' | 'bounce' | 'unsubscribe_spike' | 'open_rate_drop' | 'revenue_drop' | 'workflow_stopped';
  message: string;
  value: number;
  threshold: number;
  workflow_id?: string;
}

/**
 * What automation.statsTotals adds for the marketer: distinct people over the period, revenue per
 * recipient, conversion rate, alerts. Optional here: a service without them shows the figures it has.
 */
export interface PeopleTotals {
  recipients?: number;
  openers?: number;
  clickers?: number;
  buyers?: number;
  revenue_per_recipient_ron?: number;
  revenue_per_recipient_eur?: number;
  conversion_rate_percent?: number;
  alerts?: StatsAlert[];
}

/** automation.statsByWorkflow: one row per workflow with activity, the period's figures of each. */
export interface WorkflowStatsRow {
  workflow_id: string;
  workflow_name: string | null;
  sends_total: number;
  opens_total: number;
  clicks_total: number;
  recipients: number;
  openers: number;
  clickers: number;
  buyers: number;
  purchase_count: number;
  purchases_value_ron: number;
  purchases_value_eur: number;
  opens_unique_percent: number;
  clicks_unique_percent: number;
}

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
