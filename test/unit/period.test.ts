import { describe, expect, it } from 'vitest';
import { ApiError } from '../../shared/errors.js';
import { resolvePeriod, type PeriodParams } from '../../query-api/stats/period.js';

const BUCHAREST = 'Europe/Bucharest';
const NEW_YORK = 'America/New_York';
const MAX = 731;

/** 2026-11-21 12:00 in Bucharest (UTC+2 in November) and 05:00 the same day in New York. */
const NOW = Date.parse('2026-11-21T10:00:00Z');

const resolve = (p: PeriodParams, opts: { tz?: string; max?: number; now?: number } = {}) =>
  resolvePeriod(p, opts.tz ?? BUCHAREST, opts.max ?? MAX, opts.now ?? NOW);

function expect406(fn: () => unknown, names: string[]): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e.code).toBe(406);
    expect(e.status).toBe(400);
    const m = /^Invalid param ([a-z_]+): (.+)$/.exec(e.message);
    expect(m, e.message).not.toBeNull();
    expect(names).toContain(m![1]);
    return e.message;
  }
  throw new Error('expected a 406');
}

describe('rule 1: explicit dates', () => {
  it('start_date and stop_date: that period, inclusive', () => {
    expect(resolve({ startDate: '2026-10-01', stopDate: '2026-10-31' })).toEqual({
      from: '2026-10-01',
      to: '2026-10-31',
    });
  });
  it('one day when start and stop are the same date', () => {
    expect(resolve({ startDate: '2026-05-05', stopDate: '2026-05-05' })).toEqual({
      from: '2026-05-05',
      to: '2026-05-05',
    });
  });
  it('only stop_date: start = stop − 29 days (30 days in all)', () => {
    // 31 Oct − 29 days = 2 Oct.
    expect(resolve({ stopDate: '2026-10-31' })).toEqual({ from: '2026-10-02', to: '2026-10-31' });
    // Across a short February: 10 Mar − 9 = 1 Mar, − 20 more = 9 Feb (Feb 2026 has 28 days).
    expect(resolve({ stopDate: '2026-03-10' })).toEqual({ from: '2026-02-09', to: '2026-03-10' });
    // Across a year end: 15 Jan − 14 = 1 Jan, − 15 more = 17 Dec.
    expect(resolve({ stopDate: '2026-01-15' })).toEqual({ from: '2025-12-17', to: '2026-01-15' });
  });
  it('only start_date: stop = today in the list time zone', () => {
    expect(resolve({ startDate: '2026-11-01' })).toEqual({ from: '2026-11-01', to: '2026-11-21' });
    expect(resolve({ startDate: '2026-11-21' })).toEqual({ from: '2026-11-21', to: '2026-11-21' });
  });
  it('stop before start → 406', () => {
    expect406(
      () => resolve({ startDate: '2026-10-02', stopDate: '2026-10-01' }),
      ['stop_date', 'start_date'],
    );
  });
  it('only a start_date after today → stop (today) before start → 406', () => {
    expect406(() => resolve({ startDate: '2026-11-22' }), ['stop_date', 'start_date']);
  });
  it('a period of exactly MAX_PERIOD_DAYS is allowed, one day more → 406', () => {
    // 2024 has 366 days and 2025 has 365: 2024-01-01..2025-12-31 is 731 days.
    expect(resolve({ startDate: '2024-01-01', stopDate: '2025-12-31' })).toEqual({
      from: '2024-01-01',
      to: '2025-12-31',
    });
    expect406(
      () => resolve({ startDate: '2024-01-01', stopDate: '2026-01-01' }),
      ['start_date', 'stop_date'],
    );
  });
  it('the maximum is the one configured', () => {
    expect(resolve({ startDate: '2026-11-01', stopDate: '2026-11-10' }, { max: 10 })).toEqual({
      from: '2026-11-01',
      to: '2026-11-10',
    });
    expect406(
      () => resolve({ startDate: '2026-11-01', stopDate: '2026-11-11' }, { max: 10 }),
      ['start_date', 'stop_date'],
    );
    // only stop_date makes 30 days: over a maximum of 29.
    expect406(() => resolve({ stopDate: '2026-11-11' }, { max: 29 }), ['start_date', 'stop_date']);
  });
});

describe('rule 2: month', () => {
  it('YYYY-MM is that whole month', () => {
    expect(resolve({ month: { year: 2026, month: 2 } })).toEqual({ from: '2026-02-01', to: '2026-02-28' });
    expect(resolve({ month: { year: 2028, month: 2 } })).toEqual({ from: '2028-02-01', to: '2028-02-29' });
    expect(resolve({ month: { year: 2025, month: 12 } })).toEqual({ from: '2025-12-01', to: '2025-12-31' });
    expect(resolve({ month: { year: 2026, month: 4 } })).toEqual({ from: '2026-04-01', to: '2026-04-30' });
    expect(resolve({ month: { year: 2026, month: 1 } })).toEqual({ from: '2026-01-01', to: '2026-01-31' });
  });
  it('YYYY-MM at the ends of four-digit years', () => {
    expect(resolve({ month: { year: 999, month: 5 } })).toEqual({ from: '0999-05-01', to: '0999-05-31' });
    expect(resolve({ month: { year: 1000, month: 2 } })).toEqual({ from: '1000-02-01', to: '1000-02-28' });
    expect(resolve({ month: { year: 2000, month: 2 } })).toEqual({ from: '2000-02-01', to: '2000-02-29' });
    expect(resolve({ month: { year: 9999, month: 12 } })).toEqual({ from: '9999-12-01', to: '9999-12-31' });
  });
  it('a bare month number is the most recent such month that has begun (asked on 2026-11-21)', () => {
    expect(resolve({ month: { month: 12 } })).toEqual({ from: '2025-12-01', to: '2025-12-31' });
    expect(resolve({ month: { month: 11 } })).toEqual({ from: '2026-11-01', to: '2026-11-30' });
    expect(resolve({ month: { month: 10 } })).toEqual({ from: '2026-10-01', to: '2026-10-31' });
    expect(resolve({ month: { month: 2 } })).toEqual({ from: '2026-02-01', to: '2026-02-28' });
    expect(resolve({ month: { month: 1 } })).toEqual({ from: '2026-01-01', to: '2026-01-31' });
  });
  it('a bare month on the first day of that month is this year', () => {
    const firstOfDec = Date.parse('2026-12-01T10:00:00Z');
    expect(resolve({ month: { month: 12 } }, { now: firstOfDec })).toEqual({
      from: '2026-12-01',
      to: '2026-12-31',
    });
  });
  it('a bare month counts from today in the list time zone', () => {
    // 2026-12-31 22:30 UTC is already 2027-01-01 00:30 in Bucharest, still 2026-12-31 in New York.
    const now = Date.parse('2026-12-31T22:30:00Z');
    expect(resolve({ month: { month: 1 } }, { now, tz: BUCHAREST })).toEqual({
      from: '2027-01-01',
      to: '2027-01-31',
    });
    expect(resolve({ month: { month: 1 } }, { now, tz: NEW_YORK })).toEqual({
      from: '2026-01-01',
      to: '2026-01-31',
    });
    // Summer time: 2026-07-31 21:30 UTC is 2026-08-01 00:30 in Bucharest (UTC+3), 17:30 on 31 Jul in New York.
    const summer = Date.parse('2026-07-31T21:30:00Z');
    expect(resolve({ month: { month: 8 } }, { now: summer, tz: BUCHAREST })).toEqual({
      from: '2026-08-01',
      to: '2026-08-31',
    });
    expect(resolve({ month: { month: 8 } }, { now: summer, tz: NEW_YORK })).toEqual({
      from: '2025-08-01',
      to: '2025-08-31',
    });
  });
  it('a month longer than MAX_PERIOD_DAYS → 406', () => {
    expect(resolve({ month: { year: 2026, month: 2 } }, { max: 28 })).toEqual({
      from: '2026-02-01',
      to: '2026-02-28',
    });
    expect406(() => resolve({ month: { year: 2026, month: 3 } }, { max: 28 }), ['month']);
  });
});

describe('rule 3: days', () => {
  it('the last N days including today', () => {
    expect(resolve({ days: 1 })).toEqual({ from: '2026-11-21', to: '2026-11-21' });
    expect(resolve({ days: 7 })).toEqual({ from: '2026-11-15', to: '2026-11-21' });
    // 21 Nov − 29 = 23 Oct; − 89 = 24 Aug (21 Nov → 1 Nov: 20, Oct: 31, Sep: 30, → 1 Sep: 81, − 8 more).
    expect(resolve({ days: 90 })).toEqual({ from: '2026-08-24', to: '2026-11-21' });
    // 731 days ending 2026-11-21 start 730 days back: 2024-11-21 → 2025-11-21 is 365 days and
    // → 2026-11-21 another 365 (no 29 Feb in between), so the start is 2024-11-21.
    expect(resolve({ days: 731 })).toEqual({ from: '2024-11-21', to: '2026-11-21' });
  });
  it('days over the maximum → 406', () => {
    expect406(() => resolve({ days: 31 }, { max: 30 }), ['days']);
  });
});

describe('rule 4: the default', () => {
  it('the last 30 days including today', () => {
    // 21 Nov − 29 days = 23 Oct: 23..31 Oct is 9 days, 1..21 Nov 21 days.
    expect(resolve({})).toEqual({ from: '2026-10-23', to: '2026-11-21' });
  });
  it('a maximum below 30 makes the default too long → 406', () => {
    expect406(() => resolve({}, { max: 29 }), ['days']);
  });
});

describe('precedence: dates beat month beat days', () => {
  it('explicit dates win over month and days', () => {
    expect(
      resolve({ startDate: '2026-03-01', stopDate: '2026-03-05', month: { month: 7 }, days: 3 }),
    ).toEqual({ from: '2026-03-01', to: '2026-03-05' });
  });
  it('a stop_date alone is rule 1 too: month and days are ignored', () => {
    expect(resolve({ stopDate: '2026-10-31', month: { year: 2026, month: 1 }, days: 3 })).toEqual({
      from: '2026-10-02',
      to: '2026-10-31',
    });
  });
  it('a start_date alone is rule 1 too', () => {
    expect(resolve({ startDate: '2026-11-20', month: { month: 1 }, days: 90 })).toEqual({
      from: '2026-11-20',
      to: '2026-11-21',
    });
  });
  it('month wins over days', () => {
    expect(resolve({ month: { year: 2026, month: 6 }, days: 3 })).toEqual({
      from: '2026-06-01',
      to: '2026-06-30',
    });
  });
});

describe('"today" is the current date in the list time zone', () => {
  // 22:30 UTC: 00:30 on 21 Nov in Bucharest (UTC+2), 17:30 on 20 Nov in New York (UTC−5).
  const now = Date.parse('2026-11-20T22:30:00Z');

  it('default period', () => {
    expect(resolve({}, { now, tz: BUCHAREST })).toEqual({ from: '2026-10-23', to: '2026-11-21' });
    expect(resolve({}, { now, tz: NEW_YORK })).toEqual({ from: '2026-10-22', to: '2026-11-20' });
    expect(resolve({}, { now, tz: 'UTC' })).toEqual({ from: '2026-10-22', to: '2026-11-20' });
  });
  it('days', () => {
    expect(resolve({ days: 1 }, { now, tz: BUCHAREST })).toEqual({ from: '2026-11-21', to: '2026-11-21' });
    expect(resolve({ days: 1 }, { now, tz: NEW_YORK })).toEqual({ from: '2026-11-20', to: '2026-11-20' });
  });
  it('a missing stop_date', () => {
    expect(resolve({ startDate: '2026-11-15' }, { now, tz: BUCHAREST }).to).toBe('2026-11-21');
    expect(resolve({ startDate: '2026-11-15' }, { now, tz: NEW_YORK }).to).toBe('2026-11-20');
    // A start_date of 21 Nov is today in Bucharest but tomorrow in New York.
    expect(resolve({ startDate: '2026-11-21' }, { now, tz: BUCHAREST })).toEqual({
      from: '2026-11-21',
      to: '2026-11-21',
    });
    expect406(() => resolve({ startDate: '2026-11-21' }, { now, tz: NEW_YORK }), ['stop_date', 'start_date']);
  });
  it('just after local midnight at the start of summer time', () => {
    // Bucharest moves to UTC+3 on 2026-03-29 at 03:00 local; 2026-03-29T21:00:00Z is 00:00 on 30 Mar.
    expect(resolve({ days: 1 }, { now: Date.parse('2026-03-29T21:00:00Z') })).toEqual({
      from: '2026-03-30',
      to: '2026-03-30',
    });
    expect(resolve({ days: 1 }, { now: Date.parse('2026-03-29T20:59:59Z') })).toEqual({
      from: '2026-03-29',
      to: '2026-03-29',
    });
  });
});
