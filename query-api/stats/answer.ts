import type { DayCounters } from '../../shared/clickhouse/schema.js';
import {
  averageCents,
  centsToNumber,
  formatCents,
  percent,
  toUnits4,
  unitsToCents,
} from '../../shared/money.js';
import type { StatsRecord } from './record.js';

export function toStatsRecord(day: DayCounters, listId: number, currency: string): StatsRecord {
  const ron = toUnits4(day.value_ron);
  const eur = toUnits4(day.value_eur);
  const [revenueRon, revenueEur] = [unitsToCents(ron), unitsToCents(eur)];
  const [aovRon, aovEur] = [averageCents(ron, day.purchase_count), averageCents(eur, day.purchase_count)];
  return {
    sends_unique: day.sends_unique,
    sends_total: day.sends_total,
    opens_unique: day.opens_unique,
    opens_total: day.opens_total,
    clicks_unique: day.clicks_unique,
    clicks_total: day.clicks_total,
    purchase_count: day.purchase_count,
    purchases_value_ron: centsToNumber(revenueRon),
    purchases_value_eur: centsToNumber(revenueEur),
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
    formatted_revenue_ron: formatCents(revenueRon),
    formatted_revenue_eur: formatCents(revenueEur),
    purchases_value_aov_ron: centsToNumber(aovRon),
    formatted_value_aov_ron: formatCents(aovRon),
    purchases_value_aov_eur: centsToNumber(aovEur),
    formatted_value_aov_eur: formatCents(aovEur),
    opens_unique_percent: percent(day.opens_unique, day.sends_unique),
    clicks_unique_percent: percent(day.clicks_unique, day.sends_unique),
    list_id: String(listId),
  };
}
