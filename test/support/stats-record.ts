import type { StatsRecord } from '../../dashboard/src/stats.js';

/** A stats record as the API answers it, with zeros where a test does not care. */
export function day(date: string, over: Partial<StatsRecord> = {}): StatsRecord {
  const zero = {
    sends_unique: 0,
    sends_total: 0,
    opens_unique: 0,
    opens_total: 0,
    clicks_unique: 0,
    clicks_total: 0,
    purchase_count: 0,
    purchases_value_ron: 0,
    purchases_value_eur: 0,
    bounce_total: 0,
    unsub_total: 0,
    spam_total: 0,
    events_ok: 0,
    events_failed: 0,
    conditions_ok: 0,
    conditions_failed: 0,
    actions_ok: 0,
    actions_failed: 0,
    purchases_value_aov_ron: 0,
    purchases_value_aov_eur: 0,
    opens_unique_percent: 0,
    clicks_unique_percent: 0,
  };
  return {
    ...zero,
    date,
    list_id: '1',
    currency: 'RON',
    formatted_revenue_ron: '',
    formatted_revenue_eur: '',
    formatted_value_aov_ron: '',
    formatted_value_aov_eur: '',
    ...over,
  };
}
