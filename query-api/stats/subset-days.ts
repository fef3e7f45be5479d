import type { DayCounters } from '../../shared/clickhouse/schema.js';
import { SCOPE_COUNTERS } from '../../shared/clickhouse/schema.js';
import { UNIQUE_TYPES, type ScopeDaySet, type StatsQuery } from '../../shared/clickhouse/stats-store.js';
import { toUnits4 } from '../../shared/money.js';

/**
 * One (workflow, trigger) scope's subscriber sets: per day, one run per unique type of the subscribers'
 * dense numbers (0 … n - 1 over the list's subscribers: a union is counted by marking, not sorting).
 */
interface ScopeSets {
  /** Days ascending. */
  days: string[];
  /** Day i, type k (UNIQUE_TYPES order): subs[starts[3i + k] … starts[3i + k + 1]). */
  starts: Uint32Array;
  subs: Uint32Array;
}

/** A list's subscriber sets by `workflow|trigger` (0: any trigger), and how many ids they hold. */
export interface ListSets {
  scopes: Map<string, ScopeSets>;
  ids: number;
  /** Per dense subscriber number, the last union (`epoch`) that counted it. */
  marks: Uint32Array;
  epoch: number;
}

const TYPE_INDEX = new Map<string, number>(UNIQUE_TYPES.map((t, k) => [t, k]));

/** `listSets` rows → the packed sets of each scope. */
export function packSets(rows: ScopeDaySet[]): ListSets {
  const groups = new Map<string, ScopeDaySet[]>();
  for (const r of rows) {
    const key = `${r.workflow_id}|${r.trigger_id}`;
    const group = groups.get(key);
    if (group) group.push(r);
    else groups.set(key, [r]);
  }
  const dense = new Map<number, number>();
  const scopes = new Map<string, ScopeSets>();
  let total = 0;
  for (const [key, group] of groups) {
    const days = [...new Set(group.map((r) => r.date))].sort();
    const dayIndex = new Map(days.map((d, i) => [d, i]));
    const slot = (r: ScopeDaySet) => dayIndex.get(r.date)! * 3 + TYPE_INDEX.get(r.type)!;
    // Each (day, type) run's length at the slot after it, then a running sum: the runs' offsets.
    const starts = new Uint32Array(days.length * 3 + 1);
    for (const r of group) starts[slot(r) + 1] = r.ids.length;
    for (let i = 1; i < starts.length; i++) starts[i]! += starts[i - 1]!;
    const subs = new Uint32Array(starts[starts.length - 1]!);
    for (const r of group) {
      let at = starts[slot(r)]!;
      for (const id of r.ids) {
        let n = dense.get(id);
        if (n === undefined) dense.set(id, (n = dense.size));
        subs[at++] = n;
      }
    }
    scopes.set(key, { days, starts, subs });
    total += subs.length;
  }
  return { scopes, ids: total, marks: new Uint32Array(dense.size), epoch: 0 };
}

/** Index of the first day ≥ `date` (`after`: > `date`) in ascending 'YYYY-MM-DD' days. */
export function firstAtOrAfter<T>(
  days: T[],
  date: string,
  after = false,
  dayOf = (d: T) => d as string,
): number {
  let lo = 0;
  let hi = days.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const d = dayOf(days[mid]!);
    if (d < date || (after && d === date)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A day's money as Decimal(38,4) units (most days have none: no BigInt parse for them). */
const units = (decimal: string) => (decimal === '0' || decimal === '0.0000' ? 0n : toUnits4(decimal));

/** Decimal(38,4) units → the decimal text ClickHouse would send ("12.3400"). */
const units4 = (u: bigint) => `${u / 10_000n}.${(u % 10_000n).toString().padStart(4, '0')}`;

/**
 * The answer for a workflow subset (with or without a trigger) from the list's per-workflow day rows
 * and subscriber sets, as `FROM_SETS` computes it in the engine: per day with rows of any of the
 * workflows, totals and money summed over the workflows' rows (exact: plain counts and decimal units),
 * unique counts as the size of the union of their subscriber sets.
 */
export function subsetDays(
  scopes: Map<string, DayCounters[]>,
  sets: ListSets,
  q: StatsQuery & { workflowIds: number[] },
): DayCounters[] {
  const trigger = q.triggerId ?? 0;
  const workflows = [...new Set(q.workflowIds)];
  const byDay = new Map<string, { day: DayCounters; ron: bigint; eur: bigint }>();
  for (const w of workflows) {
    const days = scopes.get(`${w}|${trigger}`) ?? [];
    const end = firstAtOrAfter(days, q.to, true, (d) => d.date);
    for (let i = firstAtOrAfter(days, q.from, false, (d) => d.date); i < end; i++) {
      const d = days[i]!;
      const acc = byDay.get(d.date);
      if (!acc) {
        byDay.set(d.date, { day: { ...d }, ron: units(d.value_ron), eur: units(d.value_eur) });
        continue;
      }
      for (const c of SCOPE_COUNTERS) acc.day[c] += d[c];
      acc.ron += units(d.value_ron);
      acc.eur += units(d.value_eur);
    }
  }
  const scopeSets = workflows.flatMap((w) => sets.scopes.get(`${w}|${trigger}`) ?? []);
  const dates = [...byDay.keys()].sort();
  return dates.map((date) => {
    const { day, ron, eur } = byDay.get(date)!;
    day.value_ron = units4(ron);
    day.value_eur = units4(eur);
    day.sends_unique = unionSize(sets, scopeSets, date, 0);
    day.opens_unique = unionSize(sets, scopeSets, date, 1);
    day.clicks_unique = unionSize(sets, scopeSets, date, 2);
    return day;
  });
}

/** How many distinct subscribers the scopes' sets of type `k` on `date` hold together. */
function unionSize(sets: ListSets, scopeSets: ScopeSets[], date: string, k: number): number {
  // Each run holds distinct subscribers: mark what this union counted, so a repeat is not counted.
  if (sets.epoch === 0xffffffff) {
    sets.marks.fill(0);
    sets.epoch = 0;
  }
  const epoch = ++sets.epoch;
  const { marks } = sets;
  let distinct = 0;
  for (const s of scopeSets) {
    const i = firstAtOrAfter(s.days, date);
    if (s.days[i] !== date) continue;
    for (let j = s.starts[i * 3 + k]!, end = s.starts[i * 3 + k + 1]!; j < end; j++) {
      const n = s.subs[j]!;
      if (marks[n] !== epoch) {
        marks[n] = epoch;
        distinct++;
      }
    }
  }
  return distinct;
}
