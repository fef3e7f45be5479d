/**
 * The wire shapes of the `automation.stats` and `automation.statsTotals` answers, and nothing else: no
 * imports, no code, so that the dashboard (a browser app that must not import server code) can import
 * these types alone, as types.
 */

/** One element of the `automation.stats` answer: exactly the seed's fields, in its order. */
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

/**
 * The `automation.statsTotals` answer (an operation of this service, for the dashboard): the period's
 * money as one exact decimal sum over its days, rounded once (half away from zero), where summing the
 * stats answer's per-day amounts would add each day's rounding.
 */
export interface StatsTotals {
  list_id: string;
  currency: string;
  /** The resolved period (list time zone), inclusive. */
  start_date: string;
  stop_date: string;
  /** Dates with at least one matching record (the stats answer's length). */
  days: number;
  purchase_count: number;
  purchases_value_ron: number;
  purchases_value_eur: number;
  formatted_revenue_ron: string;
  formatted_revenue_eur: string;
  purchases_value_aov_ron: number;
  formatted_value_aov_ron: string;
  purchases_value_aov_eur: number;
  formatted_value_aov_eur: string;
  /** Distinct subscribers over the whole period (not per day): the union of the days' sets. */
  recipients: number;
  openers: number;
  clickers: number;
  buyers: number;
  /** Exact revenue ÷ recipients, 2 decimals (0 when none). */
  revenue_per_recipient_ron: number;
  revenue_per_recipient_eur: number;
  /** 100 × buyers ÷ recipients, 2 decimals (0 when none). */
  conversion_rate_percent: number;
  /** 100 × openers (clickers) ÷ recipients, 2 decimals (0 when none). */
  opens_unique_percent: number;
  clicks_unique_percent: number;
  /** What needs a look in this period (docs/dashboard.md "Alerts"); [] when nothing. */
  alerts: Alert[];
}

export type AlertKind =
  'spam' | 'bounce' | 'unsubscribe_spike' | 'open_rate_drop' | 'revenue_drop' | 'workflow_stopped';

/** One alert: `value` measured against `threshold` (both in percent, or days for workflow_stopped). */
export interface Alert {
  kind: AlertKind;
  message: string;
  value: number;
  threshold: number;
  workflow_id?: string;
}

/** One element of the `automation.statsByWorkflow` answer: a workflow's figures over the period. */
export interface WorkflowTotals {
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
