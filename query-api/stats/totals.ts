import type { DayCounters } from '../../shared/clickhouse/schema.js';
import { averageCents, centsToNumber, formatCents, toUnits4, unitsToCents } from '../../shared/money.js';
import type { Caller } from '../api12/operation.js';
import type { RawParams } from '../api12/params.js';
import { JsonAnswer } from '../api12/json-answer.js';
import { statsDays, statsRequest, type StatsDeps } from './handler.js';
import type { StatsTotals } from './record.js';

/**
 * The period's money from the same per-day rows the stats answer is made of (`statsDays`: held in
 * memory, or the one engine statement), summed exactly (Decimal(38,4) units in a BigInt) and rounded
 * once: the per-day answer rounds each day, so a sum of its amounts can be cents off the period's.
 */
export function totalsOf(
  days: readonly DayCounters[],
  listId: number,
  currency: string,
  period: { from: string; to: string },
): StatsTotals {
  let ron = 0n;
  let eur = 0n;
  let purchases = 0;
  for (const d of days) {
    ron += toUnits4(d.value_ron);
    eur += toUnits4(d.value_eur);
    purchases += d.purchase_count;
  }
  const [revenueRon, revenueEur] = [unitsToCents(ron), unitsToCents(eur)];
  const [aovRon, aovEur] = [averageCents(ron, purchases), averageCents(eur, purchases)];
  return {
    list_id: String(listId),
    currency,
    start_date: period.from,
    stop_date: period.to,
    days: days.length,
    purchase_count: purchases,
    purchases_value_ron: centsToNumber(revenueRon),
    purchases_value_eur: centsToNumber(revenueEur),
    formatted_revenue_ron: formatCents(revenueRon),
    formatted_revenue_eur: formatCents(revenueEur),
    purchases_value_aov_ron: centsToNumber(aovRon),
    formatted_value_aov_ron: formatCents(aovRon),
    purchases_value_aov_eur: centsToNumber(aovEur),
    formatted_value_aov_eur: formatCents(aovEur),
  };
}

/**
 * automation.statsTotals (an operation of this service, docs/api.md "automation.statsTotals"): the
 * params, checks, errors and period of automation.stats; one object with the period's exact money.
 * Kept in the answer cache beside the stats answer of the same query (its own key).
 */
export async function automationStatsTotals(
  deps: StatsDeps,
  caller: Caller,
  params: RawParams,
): Promise<JsonAnswer<StatsTotals>> {
  const { listId, query, currency } = await statsRequest(deps, caller, params);
  const answer = async () => JsonAnswer.from(totalsOf(await statsDays(deps, query), listId, currency, query));
  // The cache keys an answer by its query and the currency that shapes it: "totals" keeps this apart.
  return deps.cache ? deps.cache.read(query, `${currency}|totals`, answer) : answer();
}
