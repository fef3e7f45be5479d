import { readByWorkflow, readPeople, type PeriodPeople } from '../../shared/clickhouse/people-store.js';
import type { DayCounters } from '../../shared/clickhouse/schema.js';
import type { StatsQuery } from '../../shared/clickhouse/stats-store.js';
import { addDays, periodLength } from '../../shared/dates.js';
import {
  averageCents,
  centsToNumber,
  formatCents,
  percent,
  toUnits4,
  unitsToCents,
} from '../../shared/money.js';
import type { Caller } from '../api12/operation.js';
import type { RawParams } from '../api12/params.js';
import { JsonAnswer } from '../api12/json-answer.js';
import {
  ALERT_DEFAULTS,
  computeAlerts,
  thresholdsOf,
  type AlertThresholds,
  type PeriodSums,
} from './alerts.js';
import { statsDays, statsRequest, type StatsDeps, type StatsRequest } from './handler.js';
import type { Alert, StatsTotals } from './record.js';

/** Where the alert thresholds of a list come from (absent: the defaults). */
export interface AlertSettingsSource {
  /** The list's stored thresholds as JSON, or undefined. */
  of(listId: number): Promise<string | undefined>;
}

export interface TotalsDeps extends StatsDeps {
  alertSettings?: AlertSettingsSource;
}

const NO_PEOPLE: PeriodPeople = { recipients: 0, openers: 0, clickers: 0, buyers: 0 };

/**
 * The period's money from the same per-day rows the stats answer is made of (`statsDays`: held in
 * memory, or the one engine statement), summed exactly (Decimal(38,4) units in a BigInt) and rounded
 * once: the per-day answer rounds each day, so a sum of its amounts can be cents off the period's.
 * `people`: the period's distinct subscribers (the union of the days' sets), `alerts` what needs a look.
 */
export function totalsOf(
  days: readonly DayCounters[],
  listId: number,
  currency: string,
  period: { from: string; to: string },
  people: PeriodPeople = NO_PEOPLE,
  alerts: Alert[] = [],
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
    ...people,
    revenue_per_recipient_ron: centsToNumber(averageCents(ron, people.recipients)),
    revenue_per_recipient_eur: centsToNumber(averageCents(eur, people.recipients)),
    conversion_rate_percent: percent(people.buyers, people.recipients),
    opens_unique_percent: percent(people.openers, people.recipients),
    clicks_unique_percent: percent(people.clickers, people.recipients),
    alerts,
  };
}

/** The per-day rows' sums the alerts compare (revenue in the list's currency, in cents). */
export function sumsOf(days: readonly DayCounters[], currency: string): PeriodSums {
  const s: PeriodSums = {
    sends_total: 0,
    sends_unique: 0,
    opens_unique: 0,
    bounce_total: 0,
    unsub_total: 0,
    spam_total: 0,
    revenue_cents: 0n,
  };
  let units = 0n;
  for (const d of days) {
    s.sends_total += d.sends_total;
    s.sends_unique += d.sends_unique;
    s.opens_unique += d.opens_unique;
    s.bounce_total += d.bounce_total;
    s.unsub_total += d.unsub_total;
    s.spam_total += d.spam_total;
    units += toUnits4(currency === 'EUR' ? d.value_eur : d.value_ron);
  }
  s.revenue_cents = unitsToCents(units);
  return s;
}

/** The period of the same length that ends the day before `q` starts. */
export function previousQuery(q: StatsQuery): StatsQuery {
  const length = periodLength(q.from, q.to);
  return { ...q, from: addDays(q.from, -length), to: addDays(q.from, -1) };
}

/**
 * The period's alerts: its sums against the previous period's, and per workflow its sends before and
 * within the period's last `stopped_days` days (two grouped statements).
 */
export async function alertsFor(
  deps: StatsDeps,
  query: StatsQuery,
  days: readonly DayCounters[],
  currency: string,
  t: AlertThresholds,
): Promise<Alert[]> {
  const previous = await statsDays(deps, previousQuery(query));
  const length = periodLength(query.from, query.to);
  const workflows = [];
  if (t.stopped_days >= 1 && length > t.stopped_days) {
    const cut = addDays(query.to, -t.stopped_days);
    const [before, recent] = await Promise.all([
      readByWorkflow(deps.db, { ...query, from: addDays(query.from, -length), to: cut }, deps.generations),
      readByWorkflow(deps.db, { ...query, from: addDays(cut, 1) }, deps.generations),
    ]);
    const names = new Map((await deps.catalog.workflows(query.listId)).map((w) => [w.workflow_id, w.name]));
    const recentSends = new Map(recent.map((w) => [w.workflow_id, w.sends_total]));
    for (const w of before)
      workflows.push({
        workflow_id: w.workflow_id,
        name: names.get(w.workflow_id) ?? null,
        before: w.sends_total,
        recent: recentSends.get(w.workflow_id) ?? 0,
      });
  }
  return computeAlerts(sumsOf(days, currency), sumsOf(previous, currency), workflows, t, currency);
}

/** The totals answer of a request already read and authorised (the API operation, a share link). */
export async function totalsAnswer(deps: TotalsDeps, req: StatsRequest): Promise<JsonAnswer<StatsTotals>> {
  const { listId, query, currency } = req;
  const stored = await deps.alertSettings?.of(listId);
  const thresholds = stored === undefined ? ALERT_DEFAULTS : thresholdsOf(stored);
  const answer = async () => {
    const [days, people] = await Promise.all([
      statsDays(deps, query),
      readPeople(deps.db, query, deps.generations),
    ]);
    const alerts = await alertsFor(deps, query, days, currency, thresholds);
    return JsonAnswer.from(totalsOf(days, listId, currency, query, people, alerts));
  };
  // The cache keys an answer by its query and what shapes it: "totals" keeps this apart, the thresholds
  // make a changed setting a new key. The previous period's days are another list version's only
  // when the list changed, which retires this entry too.
  return deps.cache
    ? deps.cache.read(query, `${currency}|totals|${JSON.stringify(thresholds)}`, answer)
    : answer();
}

/**
 * automation.statsTotals (an operation of this service, docs/api.md "automation.statsTotals"): the
 * params, checks, errors and period of automation.stats; one object with the period's exact money,
 * its distinct people and its alerts. Kept in the answer cache beside the stats answer of the same
 * query (its own key).
 */
export async function automationStatsTotals(
  deps: TotalsDeps,
  caller: Caller,
  params: RawParams,
): Promise<JsonAnswer<StatsTotals>> {
  return totalsAnswer(deps, await statsRequest(deps, caller, params));
}
