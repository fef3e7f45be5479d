import { addDays, fromDayNumber, localDate, periodLength } from '../../shared/dates.js';
import { invalidParam } from '../api12/errors.js';

export interface PeriodParams {
  startDate?: string;
  stopDate?: string;
  days?: number;
  month?: { year?: number; month: number };
}

export interface Period {
  from: string;
  to: string;
}

/** The day before the 1st of the next month (Date.UTC's month is 0-based: `month` is the next one). */
const lastDayOfMonth = (year: number, month: number) =>
  fromDayNumber(Date.UTC(year, month, 1) / 86_400_000 - 1);

/**
 * The period in the list's time zone (docs/api.md "Period"): explicit dates win over `month`, which wins
 * over `days`; the default is the last 30 days including today.
 */
export function resolvePeriod(p: PeriodParams, timeZone: string, maxDays: number, now = Date.now()): Period {
  const today = localDate(now, timeZone);
  let period: Period;
  let param: string;
  if (p.startDate !== undefined || p.stopDate !== undefined) {
    const to = p.stopDate ?? today;
    const from = p.startDate ?? addDays(to, -29);
    if (to < from) throw invalidParam('stop_date', 'is before start_date');
    period = { from, to };
    param = p.startDate !== undefined ? 'start_date' : 'stop_date';
  } else if (p.month !== undefined) {
    const { month } = p.month;
    const [thisYear, thisMonth] = [Number(today.slice(0, 4)), Number(today.slice(5, 7))];
    // A bare month number is the most recent such month that has begun.
    const year = p.month.year ?? (month <= thisMonth ? thisYear : thisYear - 1);
    const yyyy = String(year).padStart(4, '0');
    period = { from: `${yyyy}-${String(month).padStart(2, '0')}-01`, to: lastDayOfMonth(year, month) };
    param = 'month';
  } else {
    const days = p.days ?? 30;
    period = { from: addDays(today, -(days - 1)), to: today };
    param = 'days';
  }
  if (periodLength(period.from, period.to) > maxDays)
    throw invalidParam(param, `period longer than ${maxDays} days`);
  return period;
}
