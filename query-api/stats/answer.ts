import type { DayCounters } from '../../shared/clickhouse/schema.js';
import { dayMoney, percent } from '../../shared/money.js';
import type { StatsRecord } from './record.js';

export function toStatsRecord(day: DayCounters, listId: number, currency: string): StatsRecord {
  const ron = dayMoney(day.value_ron, day.purchase_count);
  const eur = dayMoney(day.value_eur, day.purchase_count);
  return {
    sends_unique: day.sends_unique,
    sends_total: day.sends_total,
    opens_unique: day.opens_unique,
    opens_total: day.opens_total,
    clicks_unique: day.clicks_unique,
    clicks_total: day.clicks_total,
    purchase_count: day.purchase_count,
    purchases_value_ron: ron.value,
    purchases_value_eur: eur.value,
    bounce_total: day.bounce_total,
    unsub_total: day.unsub_total,
    spam_total: day.spam_total,
    events_ok: day.events_ok,
    events_failed: day.events_failed,
    conditions_ok: day.conditions_ok,
    conditions_failed: day.conditions_failed,
    actions_ok: day.actions_ok,
    actions_failed: day.actions_failed,
    date: day.date,
    currency,
    formatted_revenue_ron: ron.formatted,
    formatted_revenue_eur: eur.formatted,
    purchases_value_aov_ron: ron.aov,
    formatted_value_aov_ron: ron.formattedAov,
    purchases_value_aov_eur: eur.aov,
    formatted_value_aov_eur: eur.formattedAov,
    opens_unique_percent: percent(day.opens_unique, day.sends_unique),
    clicks_unique_percent: percent(day.clicks_unique, day.sends_unique),
    list_id: String(listId),
  };
}
