import type { DayCounters } from '../../shared/clickhouse/schema.js';
import { SCOPE_COUNTERS } from '../../shared/clickhouse/schema.js';
import { UNIQUE_TYPES, type ScopeDaySet, type StatsQuery } from '../../shared/clickhouse/stats-store.js';
import { safeUnits4, toUnits4 } from '../../shared/money.js';

/**
 * One (workflow, trigger) scope's subscriber sets of a month: per day, one run per unique type of the
 * subscribers' dense numbers (0 … n - 1 over the list's subscribers: a union is counted by marking, not
 * sorting).
 */
interface ScopeSets {
  /** Per day of the month (1 … 31), the index i of its runs below; -1 for a day without sets. */
  dayAt: Int8Array;
  /** Day i, type k (UNIQUE_TYPES order): subs[starts[3i + k] … starts[3i + k + 1]). */
  starts: Uint32Array;
  subs: Uint32Array;
}

/**
 * A list's subscriber sets, held by month: a month is read whole at the first subset that asks one of
 * its days, so what a list holds grows with the periods asked, not with its history (docs/operations.md
 * "Memory"). Subscribers are numbered densely over the months held.
 */
export interface ListSets {
  /** By month ('YYYY-MM'): its sets by `workflow|trigger` (0: any trigger); empty for a month without. */
  months: Map<string, Map<string, ScopeSets>>;
  /** When each month was last asked (`tick`), so the least recently asked go first when room runs out. */
  used: Map<string, number>;
  tick: number;
  /** Ids held over all months. */
  ids: number;
  /** Subscriber id → dense number (0 … n - 1). */
  dense: Map<number, number>;
  /**
   * Per dense subscriber number, the last union (`epoch`, 1 … 255) that counted it: a byte each, so that a
   * list's 200k subscribers' marks stay in a core's cache (a year's subset marks ~600k ids).
   */
  marks: Uint8Array;
  epoch: number;
}

const TYPE_INDEX = new Map<string, number>(UNIQUE_TYPES.map((t, k) => [t, k]));

export function emptySets(): ListSets {
  return {
    months: new Map(),
    used: new Map(),
    tick: 0,
    ids: 0,
    dense: new Map(),
    marks: new Uint8Array(0),
    epoch: 0,
  };
}

/** The months ('YYYY-MM') that days `from`…`to` ('YYYY-MM-DD') fall in, ascending. */
export function monthsOf(from: string, to: string): string[] {
  const months: string[] = [];
  let y = Number(from.slice(0, 4));
  let m = Number(from.slice(5, 7));
  const last = to.slice(0, 7);
  for (;;) {
    const month = `${y}-${String(m).padStart(2, '0')}`;
    if (month > last) return months;
    months.push(month);
    if (++m === 13) [y, m] = [y + 1, 1];
  }
}

/** The first and last day ('YYYY-MM-DD') of `month` ('YYYY-MM'). */
export function monthDays(month: string): { from: string; to: string } {
  const [y, m] = [Number(month.slice(0, 4)), Number(month.slice(5, 7))];
  const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return { from: `${month}-01`, to: `${month}-${String(days).padStart(2, '0')}` };
}

/**
 * `listSets` rows of whole `months` (all of them, a month without rows included) → their packed sets,
 * added to `into` (by default a new list's). A month's sets can be millions of ids (~0.5 s at 2M): the
 * event loop is given back between scopes, so requests are answered meanwhile; a month is visible to
 * them only once whole.
 */
export async function packSets(
  rows: ScopeDaySet[],
  months: string[] = [...new Set(rows.map((r) => r.date.slice(0, 7)))],
  into: ListSets = emptySets(),
): Promise<ListSets> {
  const groups = new Map<string, ScopeDaySet[]>();
  for (const r of rows) {
    const key = `${r.date.slice(0, 7)}|${r.workflow_id}|${r.trigger_id}`;
    const group = groups.get(key);
    if (group) group.push(r);
    else groups.set(key, [r]);
  }
  const { dense } = into;
  const packed = new Map<string, Map<string, ScopeSets>>(months.map((m) => [m, new Map()]));
  let total = 0;
  for (const [key, group] of groups) {
    await new Promise((r) => setImmediate(r));
    const month = packed.get(key.slice(0, 7));
    if (!month) continue; // a row outside the months asked (none is read: listSets takes their days)
    const days = [...new Set(group.map((r) => r.date))].sort();
    const dayIndex = new Map(days.map((d, i) => [d, i]));
    const dayAt = new Int8Array(32).fill(-1);
    for (const [d, i] of dayIndex) dayAt[Number(d.slice(8, 10))] = i;
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
    month.set(key.slice(8), { dayAt, starts, subs });
    total += subs.length;
  }
  // Marks for every dense number before any month using them is seen (a new array: no mark is an epoch).
  if (into.marks.length < dense.size) {
    into.marks = new Uint8Array(Math.max(dense.size, 2 * into.marks.length));
    into.epoch = 0;
  }
  forgetMonths(into, packed.keys());
  for (const [m, scopes] of packed) into.months.set(m, scopes);
  into.ids += total;
  return into;
}

/** Takes `months` out of `sets`. */
export function forgetMonths(sets: ListSets, months: Iterable<string>): void {
  for (const m of months) {
    for (const s of sets.months.get(m)?.values() ?? []) sets.ids -= s.subs.length;
    sets.months.delete(m);
    sets.used.delete(m);
  }
}

/**
 * Takes the least recently asked months out of `sets` until `fits(sets.ids)`, never one of `keep`;
 * whether it fits then.
 */
export function dropMonths(
  sets: ListSets,
  keep: ReadonlySet<string>,
  fits: (ids: number) => boolean,
): boolean {
  const order = [...sets.months.keys()]
    .filter((m) => !keep.has(m))
    .sort((a, b) => (sets.used.get(a) ?? 0) - (sets.used.get(b) ?? 0));
  for (const m of order) {
    if (fits(sets.ids)) break;
    forgetMonths(sets, [m]);
  }
  return fits(sets.ids);
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

/**
 * A sum of Decimal(38,4) amounts in units, exact: in a plain number while it stays below 2^53 (a BigInt
 * per amount was a third of a 25-workflow answer's time), else in a BigInt.
 */
function addUnits(sum: number | bigint, decimal: string): number | bigint {
  if (typeof sum === 'number') {
    const units = safeUnits4(decimal);
    if (units !== undefined && Number.isSafeInteger(sum + units)) return sum + units;
    return BigInt(sum) + toUnits4(decimal);
  }
  return sum + toUnits4(decimal);
}

/** Units → the decimal text ClickHouse would send ("12.3400"). */
function units4(sum: number | bigint): string {
  if (typeof sum === 'number') {
    const frac = sum % 10_000; // exact for a safe integer, and so is the division of the rest
    return `${(sum - frac) / 10_000}.${String(frac).padStart(4, '0')}`;
  }
  return `${sum / 10_000n}.${(sum % 10_000n).toString().padStart(4, '0')}`;
}

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
  const byDay = new Map<string, { day: DayCounters; ron: number | bigint; eur: number | bigint }>();
  for (const w of workflows) {
    const days = scopes.get(`${w}|${trigger}`) ?? [];
    const end = firstAtOrAfter(days, q.to, true, (d) => d.date);
    for (let i = firstAtOrAfter(days, q.from, false, (d) => d.date); i < end; i++) {
      const d = days[i]!;
      const acc = byDay.get(d.date);
      if (!acc) {
        byDay.set(d.date, { day: { ...d }, ron: addUnits(0, d.value_ron), eur: addUnits(0, d.value_eur) });
        continue;
      }
      for (const c of SCOPE_COUNTERS) acc.day[c] += d[c];
      acc.ron = addUnits(acc.ron, d.value_ron);
      acc.eur = addUnits(acc.eur, d.value_eur);
    }
  }
  // Each month's sets of the subset's workflows (the months of every day asked are held: DayRows).
  const byMonth = new Map<string, ScopeSets[]>();
  const setsOf = (month: string) => {
    let found = byMonth.get(month);
    if (!found) {
      const scopes = sets.months.get(month);
      found = scopes ? workflows.flatMap((w) => scopes.get(`${w}|${trigger}`) ?? []) : [];
      byMonth.set(month, found);
      sets.used.set(month, ++sets.tick);
    }
    return found;
  };
  const dates = [...byDay.keys()].sort();
  const runs: number[] = [];
  return dates.map((date) => {
    const { day, ron, eur } = byDay.get(date)!;
    const scopeSets = setsOf(date.slice(0, 7));
    day.value_ron = units4(ron);
    day.value_eur = units4(eur);
    // The scopes with sets on the day, then each type's union over them.
    const dom = Number(date.slice(8, 10));
    const present: ScopeSets[] = [];
    runs.length = 0;
    for (const s of scopeSets) {
      const i = s.dayAt[dom]!;
      if (i >= 0) {
        present.push(s);
        runs.push(i * 3);
      }
    }
    day.sends_unique = unionSize(sets, present, runs, 0);
    day.opens_unique = unionSize(sets, present, runs, 1);
    day.clicks_unique = unionSize(sets, present, runs, 2);
    return day;
  });
}

/**
 * How many distinct subscribers the scopes' runs of type `k` hold together (`runs[j]`: the index in
 * `present[j].starts` of its day's first type). Each run holds distinct subscribers: the first run's are
 * all counted, a later run's only where not yet marked by this union, and the last run marks nothing.
 */
function unionSize(sets: ListSets, present: ScopeSets[], runs: number[], k: number): number {
  const last = present.length - 1;
  if (last < 0) return 0;
  const first = present[0]!;
  let distinct = first.starts[runs[0]! + k + 1]! - first.starts[runs[0]! + k]!;
  if (last === 0) return distinct;
  if (sets.epoch === 255) {
    sets.marks.fill(0);
    sets.epoch = 0;
  }
  const epoch = ++sets.epoch;
  const { marks } = sets;
  for (let p = 0; p <= last; p++) {
    const { starts, subs } = present[p]!;
    const end = starts[runs[p]! + k + 1]!;
    let j = starts[runs[p]! + k]!;
    if (p === 0) for (; j < end; j++) marks[subs[j]!] = epoch;
    else if (p < last)
      for (; j < end; j++) {
        const n = subs[j]!;
        if (marks[n] !== epoch) {
          marks[n] = epoch;
          distinct++;
        }
      }
    else for (; j < end; j++) if (marks[subs[j]!] !== epoch) distinct++;
  }
  return distinct;
}
