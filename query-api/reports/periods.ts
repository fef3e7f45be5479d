import { addDays, fromDayNumber, localDate, toDayNumber } from '../../shared/dates.js';

/**
 * The period a report covers (docs/dashboard.md "Reports"), in the list's time zone: `monday`, the last
 * whole week (Monday to Sunday) once it has ended; `month`, the last whole calendar month. Only the most
 * recent ended period is due: a report never catches up on older ones.
 */
export interface ReportPeriod {
  /** Names the period: `2026-W47`-like for weeks (its Monday's date), `2026-10` for months. */
  key: string;
  from: string;
  to: string;
}

export function lastEndedPeriod(every: 'monday' | 'month', now: number, timeZone: string): ReportPeriod {
  const today = localDate(now, timeZone);
  if (every === 'monday') {
    // Day numbers count from 1970-01-01, a Thursday: (n + 3) % 7 is 0 on Mondays.
    const n = toDayNumber(today);
    const thisMonday = n - ((n + 3) % 7);
    const from = fromDayNumber(thisMonday - 7);
    return { key: `week-${from}`, from, to: addDays(from, 6) };
  }
  const [y, m] = [Number(today.slice(0, 4)), Number(today.slice(5, 7))];
  const [py, pm] = m === 1 ? [y - 1, 12] : [y, m - 1];
  const from = `${String(py).padStart(4, '0')}-${String(pm).padStart(2, '0')}-01`;
  const to = addDays(`${today.slice(0, 7)}-01`, -1);
  return { key: `month-${from.slice(0, 7)}`, from, to };
}
