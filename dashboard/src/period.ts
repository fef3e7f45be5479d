/**
 * Period presets → the API's period params (docs/api.md "Period"), and the previous period of the same length
 * that the totals are compared with. Dates are calendar dates (`YYYY-MM-DD`) in the list's time zone.
 */
export type Preset =
  | { kind: 'days'; days: number }
  | { kind: 'this-month' }
  | { kind: 'last-month' }
  | { kind: 'custom'; start: string; stop: string };

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

function previousOf(from: string, to: string): ResolvedPeriod['previous'] {
  const len = lengthInDays(from, to);
  const prevTo = addDays(from, -1);
  const prevFrom = addDays(from, -len);
  return { params: { start_date: prevFrom, stop_date: prevTo }, from: prevFrom, to: prevTo };
}

/**
 * - last N days → `days=N` (today and the N−1 days before);
 * - last month → `month=YYYY-MM`, the whole month, compared with the whole month before it;
 * - this month → `start_date` = the 1st, `stop_date` = today: the month so far, so that it is compared
 *   with as many elapsed days before it (the API's `month` would count the days still to come);
 * - custom → `start_date`/`stop_date` as picked. A range the API refuses (stop before start) is sent as
 *   it is, so that the API's own 406 message is what the user reads; it has no previous period.
 */
export function resolvePreset(preset: Preset, today: string): ResolvedPeriod {
  let params: PeriodParams;
  let from: string;
  let to: string;
  switch (preset.kind) {
    case 'days':
      params = { days: preset.days };
      from = addDays(today, -(preset.days - 1));
      to = today;
      break;
    case 'this-month':
      from = `${today.slice(0, 8)}01`;
      to = today;
      params = { start_date: from, stop_date: to };
      break;
    case 'last-month': {
      to = addDays(`${today.slice(0, 8)}01`, -1);
      from = `${to.slice(0, 8)}01`;
      params = { month: to.slice(0, 7) };
      // A month is compared with the whole month before it, whatever its length (October with
      // September), not with as many days before it.
      const prevTo = addDays(from, -1);
      const prevFrom = `${prevTo.slice(0, 8)}01`;
      return {
        params,
        from,
        to,
        previous: { params: { start_date: prevFrom, stop_date: prevTo }, from: prevFrom, to: prevTo },
      };
    }
    case 'custom':
      params = { start_date: preset.start, stop_date: preset.stop };
      from = preset.start;
      to = preset.stop;
      if (!isDate(from) || !isDate(to) || to < from) {
        return { params, from, to, previous: { params, from, to } };
      }
      break;
  }
  return { params, from, to, previous: previousOf(from, to) };
}

/** True when the custom range can have a previous period (both dates valid, stop not before start). */
export const isComparable = (p: ResolvedPeriod): boolean =>
  isDate(p.from) && isDate(p.to) && p.to >= p.from && p.previous.to < p.from;
