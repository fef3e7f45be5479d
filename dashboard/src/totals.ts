import { COUNT_FIELDS, type CountField, type StatsRecord } from './stats.js';

/**
 * The period's totals. The only arithmetic the dashboard does on the API's numbers: sums over the days
 * the API answered, and the period's rates and AOV as ratios of those sums, rounded as the API rounds
 * (half away from zero, on integers — money in cents, never summed in binary floating point).
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
  const n = counts.purchase_count;
  return {
    days: records.length,
    counts,
    revenueRonCents: ron,
    revenueEurCents: eur,
    aovRonCents: n === 0 ? 0 : Number(divRound(BigInt(ron), BigInt(n))),
    aovEurCents: n === 0 ? 0 : Number(divRound(BigInt(eur), BigInt(n))),
    openRate: percent(counts.opens_unique, counts.sends_unique),
    clickRate: percent(counts.clicks_unique, counts.sends_unique),
  };
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
