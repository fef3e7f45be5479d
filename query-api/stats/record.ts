/**
 * The wire shape of the `automation.stats` answer, and nothing else: no imports, no code, so that the
 * dashboard (a browser app that must not import server code) can import this type alone, as a type.
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
