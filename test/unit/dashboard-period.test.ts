import { describe, expect, it } from 'vitest';
import { isComparable, lengthInDays, resolvePreset, todayIn } from '../../dashboard/src/period.js';

/** The dashboard's period presets → automation.stats params, and the previous period it compares with. */
describe('dashboard period presets', () => {
  const today = '2026-11-22';

  const withToday = { includeToday: true };

  it.each([7, 30, 90])('last %i days with today → days=N, compared with the N days before', (n) => {
    const p = resolvePreset({ kind: 'days', days: n }, today, withToday);
    expect(p.params).toEqual({ days: n });
    expect(p.to).toBe(today);
    expect(lengthInDays(p.from, p.to)).toBe(n);
    expect(lengthInDays(p.previous.from, p.previous.to)).toBe(n);
    expect(p.previous.params).toEqual({ start_date: p.previous.from, stop_date: p.previous.to });
    expect(lengthInDays(p.previous.to, p.from)).toBe(2); // adjacent: the day before `from` ends it
  });

  it('last 7 days with today on 2026-11-22: 11-16..11-22 against 11-09..11-15', () => {
    const p = resolvePreset({ kind: 'days', days: 7 }, today, withToday);
    expect([p.from, p.to, p.previous.from, p.previous.to]).toEqual([
      '2026-11-16',
      '2026-11-22',
      '2026-11-09',
      '2026-11-15',
    ]);
  });

  it('this month with today → the 1st to today as dates, compared with as many days before the 1st', () => {
    const p = resolvePreset({ kind: 'this-month' }, today, withToday);
    expect(p.params).toEqual({ start_date: '2026-11-01', stop_date: '2026-11-22' });
    expect(p.previous).toEqual({
      params: { start_date: '2026-10-10', stop_date: '2026-10-31' },
      from: '2026-10-10',
      to: '2026-10-31',
    });
  });

  it('this month on the 1st is one day, compared with the last day of the month before', () => {
    const p = resolvePreset({ kind: 'this-month' }, '2026-03-01');
    expect(p.params).toEqual({ start_date: '2026-03-01', stop_date: '2026-03-01' });
    expect(p.previous.params).toEqual({ start_date: '2026-02-28', stop_date: '2026-02-28' });
  });

  it('last month → month=YYYY-MM, the whole month, compared with the whole month before, across a year end and a leap February', () => {
    const jan = resolvePreset({ kind: 'last-month' }, '2027-01-15');
    expect(jan.params).toEqual({ month: '2026-12' });
    expect([jan.from, jan.to]).toEqual(['2026-12-01', '2026-12-31']);
    expect(jan.previous.params).toEqual({ start_date: '2026-11-01', stop_date: '2026-11-30' });

    const mar = resolvePreset({ kind: 'last-month' }, '2028-03-31');
    expect(mar.params).toEqual({ month: '2028-02' });
    expect([mar.from, mar.to]).toEqual(['2028-02-01', '2028-02-29']);
    expect(mar.previous).toMatchObject({ from: '2028-01-01', to: '2028-01-31' });

    // March (31 days) against February (28), not against the 31 days before the 1st.
    const apr = resolvePreset({ kind: 'last-month' }, '2027-04-10');
    expect(apr.previous).toMatchObject({ from: '2027-02-01', to: '2027-02-28' });
  });

  it('custom → start_date/stop_date as picked, compared with the same length before', () => {
    const p = resolvePreset({ kind: 'custom', start: '2026-02-20', stop: '2026-03-05' }, today);
    expect(p.params).toEqual({ start_date: '2026-02-20', stop_date: '2026-03-05' });
    expect(lengthInDays(p.from, p.to)).toBe(14);
    expect(p.previous.params).toEqual({ start_date: '2026-02-06', stop_date: '2026-02-19' });
    expect(isComparable(p)).toBe(true);
  });

  it('a custom range the API refuses is sent as it is, with no previous period', () => {
    const backwards = resolvePreset({ kind: 'custom', start: '2026-03-05', stop: '2026-03-01' }, today);
    expect(backwards.params).toEqual({ start_date: '2026-03-05', stop_date: '2026-03-01' });
    expect(isComparable(backwards)).toBe(false);
    const empty = resolvePreset({ kind: 'custom', start: '', stop: '2026-03-01' }, today);
    expect(isComparable(empty)).toBe(false);
    const impossible = resolvePreset({ kind: 'custom', start: '2026-02-30', stop: '2026-03-01' }, today);
    expect(isComparable(impossible)).toBe(false);
  });

  it('by default a rolling period ends yesterday: last 30 days on 2026-11-22 is 10-23..11-21', () => {
    const p = resolvePreset({ kind: 'days', days: 30 }, today);
    expect(p.params).toEqual({ start_date: '2026-10-23', stop_date: '2026-11-21' });
    expect(p.previous).toMatchObject({ from: '2026-09-23', to: '2026-10-22' });
    const month = resolvePreset({ kind: 'this-month' }, today);
    expect(month.params).toEqual({ start_date: '2026-11-01', stop_date: '2026-11-21' });
    expect(month.previous).toMatchObject({ from: '2026-10-11', to: '2026-10-31' });
  });

  it('today alone, compared with yesterday', () => {
    const p = resolvePreset({ kind: 'today' }, today);
    expect(p.params).toEqual({ start_date: today, stop_date: today });
    expect(p.previous).toMatchObject({ from: '2026-11-21', to: '2026-11-21' });
  });

  it('year to date: 1 January to yesterday (today when asked, and on 1 January)', () => {
    const p = resolvePreset({ kind: 'year-to-date' }, today);
    expect([p.from, p.to]).toEqual(['2026-01-01', '2026-11-21']);
    expect(resolvePreset({ kind: 'year-to-date' }, today, withToday).to).toBe(today);
    const jan1 = resolvePreset({ kind: 'year-to-date' }, '2027-01-01');
    expect([jan1.from, jan1.to]).toEqual(['2027-01-01', '2027-01-01']);
  });

  it('last 12 months: the 12 whole months before this one, compared with the same months a year before', () => {
    const p = resolvePreset({ kind: 'last-12-months' }, today);
    expect(p.params).toEqual({ start_date: '2025-11-01', stop_date: '2026-10-31' });
    expect(p.previous).toMatchObject({ from: '2024-11-01', to: '2025-10-31' });
    const jan = resolvePreset({ kind: 'last-12-months' }, '2027-01-15');
    expect([jan.from, jan.to]).toEqual(['2026-01-01', '2026-12-31']);
  });

  it('compared with the same period last year (29 February → 28 February)', () => {
    const p = resolvePreset({ kind: 'days', days: 30 }, today, { compare: 'year' });
    expect([p.from, p.to]).toEqual(['2026-10-23', '2026-11-21']);
    expect(p.previous).toEqual({
      params: { start_date: '2025-10-23', stop_date: '2025-11-21' },
      from: '2025-10-23',
      to: '2025-11-21',
    });
    const leap = resolvePreset({ kind: 'custom', start: '2028-02-01', stop: '2028-02-29' }, today, {
      compare: 'year',
    });
    expect(leap.previous).toMatchObject({ from: '2027-02-01', to: '2027-02-28' });
    expect(isComparable(leap)).toBe(true);
  });

  it("today is the list's date, not the browser's", () => {
    const at = Date.parse('2026-11-22T23:30:00Z');
    expect(todayIn('Europe/Bucharest', at)).toBe('2026-11-23');
    expect(todayIn('Europe/London', at)).toBe('2026-11-22');
    expect(todayIn('America/New_York', at)).toBe('2026-11-22');
    expect(todayIn('Pacific/Kiritimati', Date.parse('2026-11-22T10:00:00Z'))).toBe('2026-11-23');
  });
});
