/**
 * Period presets → the API's period params (docs/api.md "Period"), and the previous period of the same length
 * that the totals are compared with. Dates are calendar dates (`YYYY-MM-DD`) in the list's time zone.
 */
export type Preset =
  | { kind: 'days'; days: number }
  | { kind: 'today' }
  | { kind: 'this-month' }
  | { kind: 'last-month' }
  | { kind: 'last-12-months' }
  | { kind: 'year-to-date' }
  | { kind: 'custom'; start: string; stop: string };

/**
 * How a period is read: `includeToday` makes a rolling period (last N days, this month, the year to
 * date) end today instead of yesterday — a half day pulls every change down, so yesterday is the
 * default; `compare` picks the previous period of the same length, or the same dates a year before.
 */
export interface PeriodOptions {
  includeToday?: boolean;
  compare?: 'previous' | 'year';
}

/** Exactly the params automation.stats takes for a period. */
export interface PeriodParams {
  days?: number;
  month?: string;
  start_date?: string;
  stop_date?: string;
}

export interface ResolvedPeriod {
  /** What the dashboard sends for the period shown. */
  params: PeriodParams;
  from: string;
  to: string;
  /**
   * What `from`–`to` is compared with, always as explicit dates: the same number of days ending the day
   * before `from`; for last month, the whole month before it.
   */
  previous: { params: PeriodParams; from: string; to: string };
}

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD` → days since 1970-01-01 (UTC calendar arithmetic, no time zone involved). */
export function dayNumber(date: string): number {
  const m = DATE.exec(date);
  if (!m) throw new Error(`not a date: ${date}`);
  const n = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / DAY_MS;
  if (fromDayNumber(n) !== date) throw new Error(`not a date: ${date}`);
  return n;
}

export const fromDayNumber = (n: number): string => new Date(n * DAY_MS).toISOString().slice(0, 10);
export const addDays = (date: string, days: number): string => fromDayNumber(dayNumber(date) + days);
/** Days from `from` to `to`, both included. */
export const lengthInDays = (from: string, to: string): number => dayNumber(to) - dayNumber(from) + 1;
export const isDate = (s: string): boolean => {
  try {
    dayNumber(s);
    return true;
  } catch {
    return false;
  }
};

/** Today's date in a time zone, as the API counts "today" for the list. */
export function todayIn(timeZone: string, now: number = Date.now()): string {
  // en-CA writes dates as YYYY-MM-DD.
  return new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(new Date(now));
}

/** The same calendar date a year before (29 February → 28 February). */
export function yearBefore(date: string): string {
  const y = `${Number(date.slice(0, 4)) - 1}${date.slice(4)}`;
  return isDate(y) ? y : `${y.slice(0, 8)}28`;
}

function lastYearOf(from: string, to: string): ResolvedPeriod['previous'] {
  const [f, t] = [yearBefore(from), yearBefore(to)];
  return { params: { start_date: f, stop_date: t }, from: f, to: t };
}

function previousOf(from: string, to: string): ResolvedPeriod['previous'] {
  const len = lengthInDays(from, to);
  const prevTo = addDays(from, -1);
  const prevFrom = addDays(from, -len);
  return { params: { start_date: prevFrom, stop_date: prevTo }, from: prevFrom, to: prevTo };
}

/**
 * - last N days → the N days ending yesterday (`start_date`/`stop_date`); with `includeToday`, `days=N`
 *   (today and the N−1 days before);
 * - today → today alone, compared with yesterday;
 * - this month → the 1st to yesterday (today with `includeToday`, and on the 1st, when there is no
 *   yesterday in the month): the month so far, compared with as many days before it;
 * - last month → `month=YYYY-MM`, the whole month, compared with the whole month before it;
 * - last 12 months → the 12 whole calendar months before this one;
 * - year to date → 1 January to yesterday (today with `includeToday`, and on 1 January);
 * - custom → `start_date`/`stop_date` as picked. A range the API refuses (stop before start) is sent as
 *   it is, so that the API's own 406 message is what the user reads; it has no previous period.
 * With `compare: 'year'` every period is compared with the same dates a year before.
 */
export function resolvePreset(preset: Preset, today: string, opts: PeriodOptions = {}): ResolvedPeriod {
  const resolved = resolveDates(preset, today, opts.includeToday ?? false);
  if (opts.compare === 'year' && isDate(resolved.from) && isDate(resolved.to) && resolved.to >= resolved.from)
    return { ...resolved, previous: lastYearOf(resolved.from, resolved.to) };
  return resolved;
}

const range = (from: string, to: string): ResolvedPeriod => ({
  params: { start_date: from, stop_date: to },
  from,
  to,
  previous: previousOf(from, to),
});

function resolveDates(preset: Preset, today: string, includeToday: boolean): ResolvedPeriod {
  const yesterday = addDays(today, -1);
  /** The end of a period so far that starts on `first`: yesterday, unless today or no yesterday in it. */
  const endFrom = (first: string) => (includeToday || yesterday < first ? today : yesterday);
  switch (preset.kind) {
    case 'days': {
      if (includeToday) {
        const from = addDays(today, -(preset.days - 1));
        return { params: { days: preset.days }, from, to: today, previous: previousOf(from, today) };
      }
      return range(addDays(yesterday, -(preset.days - 1)), yesterday);
    }
    case 'today':
      return range(today, today);
    case 'this-month': {
      const from = `${today.slice(0, 8)}01`;
      return range(from, endFrom(from));
    }
    case 'year-to-date': {
      const from = `${today.slice(0, 5)}01-01`;
      return range(from, endFrom(from));
    }
    case 'last-12-months': {
      const to = addDays(`${today.slice(0, 8)}01`, -1);
      const from = `${Number(today.slice(0, 4)) - 1}-${today.slice(5, 7)}-01`;
      // Compared with the 12 months before them: the same months a year earlier.
      return { params: { start_date: from, stop_date: to }, from, to, previous: lastYearOf(from, to) };
    }
    case 'last-month': {
      const to = addDays(`${today.slice(0, 8)}01`, -1);
      const from = `${to.slice(0, 8)}01`;
      // A month is compared with the whole month before it, whatever its length (October with
      // September), not with as many days before it.
      const prevTo = addDays(from, -1);
      const prevFrom = `${prevTo.slice(0, 8)}01`;
      return {
        params: { month: to.slice(0, 7) },
        from,
        to,
        previous: { params: { start_date: prevFrom, stop_date: prevTo }, from: prevFrom, to: prevTo },
      };
    }
    case 'custom': {
      const params = { start_date: preset.start, stop_date: preset.stop };
      const [from, to] = [preset.start, preset.stop];
      if (!isDate(from) || !isDate(to) || to < from)
        return { params, from, to, previous: { params, from, to } };
      return range(from, to);
    }
  }
}

/** True when the custom range can have a previous period (both dates valid, stop not before start). */
export const isComparable = (p: ResolvedPeriod): boolean =>
  isDate(p.from) && isDate(p.to) && p.to >= p.from && p.previous.to < p.from;
