import {
  COUNT_FIELDS,
  type CountField,
  type PeopleTotals,
  type StatsAlert,
  type StatsRecord,
  type StatsTotals,
  type WorkflowStatsRow,
} from './stats.js';

/** Distinct people over the period (automation.statsTotals), and the ratios of them. */
export interface People {
  recipients: number;
  openers: number;
  clickers: number;
  buyers: number;
  revenuePerRecipientRonCents: number;
  revenuePerRecipientEurCents: number;
  /** As the API answers it, in % to 2 decimals. */
  conversionRate: number;
  /** openers ÷ recipients, clickers ÷ recipients, in % to 2 decimals (0 when no recipients). */
  openRate: number;
  clickRate: number;
}

/**
 * The period's totals. The only arithmetic the dashboard does on the API's numbers: sums of counts over
 * the days the API answered, and the period's rates as ratios of those sums, rounded as the API rounds
 * (half away from zero, on integers). Money is not a sum of the days' amounts (each already rounded to
 * the cent, so their sum can be cents off): revenue and AOV are automation.statsTotals' answer for the
 * same query, the period's exact sum rounded once (`withExactMoney`).
 */
export interface Totals {
  days: number;
  counts: Record<CountField, number>;
  revenueRonCents: number;
  revenueEurCents: number;
  aovRonCents: number;
  aovEurCents: number;
  /** Σ opens_unique ÷ Σ sends_unique × 100, to 2 decimals (0 when no sends). */
  openRate: number;
  clickRate: number;
  /** Distinct people, when the service answers them. */
  people?: People;
  /**
   * Built from automation.statsByWorkflow's row: only its counts (sends, opens, clicks, purchases) and
   * money are known; the others (bounces, steps, per-day uniques) are not, and are not shown.
   */
  partial?: boolean;
  alerts?: StatsAlert[];
}

/** A 2-decimal JSON number from the API → integer cents (exact: the API rounded it to cents). */
export const toCents = (value: number): number => Math.round(value * 100);

/** round(n / d) half away from zero, for non-negative integers. */
function divRound(n: bigint, d: bigint): bigint {
  return (2n * n + d) / (2n * d);
}

/** 100 × part ÷ whole to 2 decimals, as the API computes its percentages. */
export function percent(part: number, whole: number): number {
  if (whole === 0) return 0;
  return Number(divRound(BigInt(part) * 10_000n, BigInt(whole))) / 100;
}

export function totalsOf(records: readonly StatsRecord[]): Totals {
  const counts = Object.fromEntries(COUNT_FIELDS.map((f) => [f, 0])) as Record<CountField, number>;
  let ron = 0;
  let eur = 0;
  for (const r of records) {
    for (const f of COUNT_FIELDS) counts[f] += r[f];
    ron += toCents(r.purchases_value_ron);
    eur += toCents(r.purchases_value_eur);
  }
  return withRatios(records.length, counts, ron, eur);
}

/**
 * `t` (a sum of the days' answer) with the period's money as automation.statsTotals answered it for
 * the same query: exact revenue rounded once, AOV = exact revenue ÷ purchases rounded once.
 */
export function withExactMoney(t: Totals, money: StatsTotals & PeopleTotals): Totals {
  const people: People | undefined =
    typeof money.recipients === 'number'
      ? {
          recipients: money.recipients,
          openers: money.openers ?? 0,
          clickers: money.clickers ?? 0,
          buyers: money.buyers ?? 0,
          revenuePerRecipientRonCents: toCents(money.revenue_per_recipient_ron ?? 0),
          revenuePerRecipientEurCents: toCents(money.revenue_per_recipient_eur ?? 0),
          conversionRate: money.conversion_rate_percent ?? 0,
          // The API's rates of people (docs/api.md "automation.statsTotals": openers ÷ recipients).
          openRate: money.opens_unique_percent,
          clickRate: money.clicks_unique_percent,
        }
      : undefined;
  return {
    ...t,
    ...(people ? { people } : {}),
    ...(money.alerts ? { alerts: money.alerts } : {}),
    revenueRonCents: toCents(money.purchases_value_ron),
    revenueEurCents: toCents(money.purchases_value_eur),
    aovRonCents: toCents(money.purchases_value_aov_ron),
    aovEurCents: toCents(money.purchases_value_aov_eur),
  };
}

/** Totals from counts and cents: the period's rates and AOV as ratios of the sums. */
function withRatios(days: number, counts: Record<CountField, number>, ron: number, eur: number): Totals {
  const n = counts.purchase_count;
  return {
    days,
    counts,
    revenueRonCents: ron,
    revenueEurCents: eur,
    aovRonCents: n === 0 ? 0 : Number(divRound(BigInt(ron), BigInt(n))),
    aovEurCents: n === 0 ? 0 : Number(divRound(BigInt(eur), BigInt(n))),
    openRate: percent(counts.opens_unique, counts.sends_unique),
    clickRate: percent(counts.clicks_unique, counts.sends_unique),
  };
}

/**
 * `whole` less `part`, where `part` is the API's answer for a subset of the workflows `whole` covers:
 * what the subset leaves out. Counts of records split exactly; money is the difference of the two
 * periods' totals, each rounded once (so within a cent of the exact remainder); a unique count becomes
 * the subscribers counted in `whole` on a day but in no workflow of `part` that day (never negative).
 */
export function minus(whole: Totals, part: Totals): Totals {
  const counts = Object.fromEntries(
    COUNT_FIELDS.map((f) => [f, Math.max(0, whole.counts[f] - part.counts[f])]),
  ) as Record<CountField, number>;
  return withRatios(
    whole.days,
    counts,
    Math.max(0, whole.revenueRonCents - part.revenueRonCents),
    Math.max(0, whole.revenueEurCents - part.revenueEurCents),
  );
}

export type Change =
  | { kind: 'same' }
  /** The previous period had none: no percentage to give. */
  | { kind: 'new' }
  /** This period has none of what a ratio divides by: no ratio, so no change either. */
  | { kind: 'undefined' }
  | { kind: 'percent'; value: number }
  /** Rates are compared in percentage points. */
  | { kind: 'points'; value: number };

/**
 * Relative change of an amount (a count, or money in cents: non-negative integers), in percent to
 * 1 decimal, rounded half away from zero.
 */
export function changeOf(current: number, previous: number): Change {
  if (current === previous) return { kind: 'same' };
  if (previous === 0) return { kind: 'new' };
  const tenths = Number(divRound(BigInt(Math.abs(current - previous)) * 1000n, BigInt(previous))) / 10;
  return { kind: 'percent', value: current > previous ? tenths : -tenths };
}

/** Difference of two rates (each with 2 decimals), in percentage points. */
export function pointsChange(current: number, previous: number): Change {
  const diff = Math.round(current * 100) - Math.round(previous * 100);
  return diff === 0 ? { kind: 'same' } : { kind: 'points', value: diff / 100 };
}

/**
 * The rates a marketer ranks workflows by (docs/dashboard.md "Figures"): each a ratio of the period's
 * sums, null where its denominator is 0. Percentages to 2 decimals, money per recipient to the cent.
 */
export interface Rates {
  openRate: number | null;
  clickRate: number | null;
  clickToOpen: number | null;
  orderRate: number | null;
  /** Cents of the currency asked for, per unique send. */
  revenuePerRecipientCents: number | null;
  bounceRate: number | null;
  unsubRate: number | null;
  spamRate: number | null;
}

export function ratesOf(t: Totals, currency: 'RON' | 'EUR'): Rates {
  const c = t.counts;
  const of = (part: number, whole: number) => (whole === 0 ? null : percent(part, whole));
  const revenue = currency === 'RON' ? t.revenueRonCents : t.revenueEurCents;
  const p = t.people;
  if (p) {
    // Of people, over the period: recipients, openers, clickers, buyers.
    const none = p.recipients === 0;
    return {
      openRate: none ? null : p.openRate,
      clickRate: none ? null : p.clickRate,
      clickToOpen: of(p.clickers, p.openers),
      orderRate: none ? null : p.conversionRate,
      revenuePerRecipientCents: none
        ? null
        : currency === 'RON'
          ? p.revenuePerRecipientRonCents
          : p.revenuePerRecipientEurCents,
      bounceRate: t.partial ? null : of(c.bounce_total, c.sends_total),
      unsubRate: t.partial ? null : of(c.unsub_total, c.sends_total),
      spamRate: t.partial ? null : of(c.spam_total, c.sends_total),
    };
  }
  return {
    openRate: of(c.opens_unique, c.sends_unique),
    clickRate: of(c.clicks_unique, c.sends_unique),
    clickToOpen: of(c.clicks_unique, c.opens_unique),
    orderRate: of(c.purchase_count, c.sends_unique),
    revenuePerRecipientCents:
      c.sends_unique === 0 ? null : Number(divRound(BigInt(revenue), BigInt(c.sends_unique))),
    bounceRate: of(c.bounce_total, c.sends_total),
    unsubRate: of(c.unsub_total, c.sends_total),
    spamRate: of(c.spam_total, c.sends_total),
  };
}

/**
 * A row of automation.statsByWorkflow as the table's totals: its counts of records and money as
 * answered, its people, the ratios of them; what the row does not answer is marked `partial`.
 */
export function totalsOfGrouped(r: WorkflowStatsRow): Totals {
  const counts = Object.fromEntries(COUNT_FIELDS.map((f) => [f, 0])) as Record<CountField, number>;
  counts.sends_total = r.sends_total;
  counts.opens_total = r.opens_total;
  counts.clicks_total = r.clicks_total;
  counts.purchase_count = r.purchase_count;
  const ron = toCents(r.purchases_value_ron);
  const eur = toCents(r.purchases_value_eur);
  const perRecipient = (cents: number) =>
    r.recipients === 0 ? 0 : Number(divRound(BigInt(cents), BigInt(r.recipients)));
  return {
    ...withRatios(0, counts, ron, eur),
    partial: true,
    people: {
      recipients: r.recipients,
      openers: r.openers,
      clickers: r.clickers,
      buyers: r.buyers,
      openRate: r.opens_unique_percent,
      clickRate: r.clicks_unique_percent,
      conversionRate: percent(r.buyers, r.recipients),
      revenuePerRecipientRonCents: perRecipient(ron),
      revenuePerRecipientEurCents: perRecipient(eur),
    },
  };
}

/** The sum of grouped rows (workflows the catalog does not name): counts and money; people not (a person may be in several). */
export function sumOfPartial(rows: readonly Totals[]): Totals {
  const counts = Object.fromEntries(COUNT_FIELDS.map((f) => [f, 0])) as Record<CountField, number>;
  let [ron, eur] = [0, 0];
  for (const t of rows) {
    for (const f of COUNT_FIELDS) counts[f] += t.counts[f];
    ron += t.revenueRonCents;
    eur += t.revenueEurCents;
  }
  return { ...withRatios(0, counts, ron, eur), partial: true };
}
