import { describe, expect, it } from 'vitest';
import { toCsv } from '../../dashboard/src/csv.js';
import { format1, format2, formatCents, formatInt } from '../../dashboard/src/format.js';
import { day } from '../support/stats-record.js';
import { changeOf, percent, pointsChange, totalsOf } from '../../dashboard/src/totals.js';
import { formatCents as apiFormatCents, percent as apiPercent } from '../../shared/money.js';

describe('dashboard period totals', () => {
  it('sums counters and money (in cents: 0.1 + 0.2 is 0.30, not 0.30000000000000004)', () => {
    const t = totalsOf([
      day('2026-11-01', {
        sends_total: 10,
        sends_unique: 8,
        purchase_count: 1,
        purchases_value_ron: 0.1,
        purchases_value_eur: 1234.56,
      }),
      day('2026-11-02', {
        sends_total: 5,
        sends_unique: 4,
        purchase_count: 2,
        purchases_value_ron: 0.2,
        purchases_value_eur: 0.01,
      }),
    ]);
    expect(t.days).toBe(2);
    expect(t.counts.sends_total).toBe(15);
    expect(t.counts.sends_unique).toBe(12);
    expect(t.revenueRonCents).toBe(30);
    expect(t.revenueEurCents).toBe(123_457);
    expect(t.aovRonCents).toBe(10);
    expect(t.aovEurCents).toBe(41_152); // 1234.57 / 3 = 411.523…
  });

  it('rates are Σ unique opens (clicks) ÷ Σ unique sends, rounded half away from zero like the API', () => {
    const t = totalsOf([
      day('2026-11-01', { sends_unique: 3, opens_unique: 1, clicks_unique: 2 }),
      day('2026-11-02', { sends_unique: 5, opens_unique: 0, clicks_unique: 0 }),
    ]);
    expect(t.openRate).toBe(12.5);
    expect(t.clickRate).toBe(25);
    expect(percent(1, 3)).toBe(33.33);
    expect(percent(2, 3)).toBe(66.67);
    expect(percent(1, 8000)).toBe(0.01); // 0.0125 → 0.01
    expect(percent(1, 400_000)).toBe(0); // 0.00025 → 0.00
    expect(percent(1, 20_000)).toBe(0.01); // 0.005 → half away from zero
    for (const [a, b] of [
      [1, 3],
      [7, 9],
      [123, 4567],
      [1, 20_000],
      [999, 1000],
    ] as const)
      expect(percent(a, b)).toBe(apiPercent(a, b));
    expect(percent(5, 0)).toBe(0);
  });

  it('an empty period is all zeros, AOV and rates included', () => {
    const t = totalsOf([]);
    expect([t.days, t.counts.sends_total, t.aovRonCents, t.openRate, t.clickRate]).toEqual([0, 0, 0, 0, 0]);
  });
});

describe('dashboard previous-period comparison', () => {
  it('relative change to one decimal, half away from zero', () => {
    expect(changeOf(110, 100)).toEqual({ kind: 'percent', value: 10 });
    expect(changeOf(90, 100)).toEqual({ kind: 'percent', value: -10 });
    expect(changeOf(1, 3)).toEqual({ kind: 'percent', value: -66.7 });
    expect(changeOf(2001, 2000)).toEqual({ kind: 'percent', value: 0.1 }); // 0.05 % → 0.1
    expect(changeOf(1999, 2000)).toEqual({ kind: 'percent', value: -0.1 });
    expect(changeOf(300, 100)).toEqual({ kind: 'percent', value: 200 });
  });

  it('no change, and nothing before (no percentage of zero)', () => {
    expect(changeOf(7, 7)).toEqual({ kind: 'same' });
    expect(changeOf(0, 0)).toEqual({ kind: 'same' });
    expect(changeOf(5, 0)).toEqual({ kind: 'new' });
    expect(changeOf(0, 5)).toEqual({ kind: 'percent', value: -100 });
  });

  it('rates are compared in percentage points, exactly', () => {
    expect(pointsChange(54.2, 55.82)).toEqual({ kind: 'points', value: -1.62 });
    expect(pointsChange(23.1, 22.56)).toEqual({ kind: 'points', value: 0.54 });
    expect(pointsChange(0.3, 0.1 + 0.2)).toEqual({ kind: 'same' });
  });
});

describe('dashboard number formatting (as the API formats, ro-RO)', () => {
  it.each([0, 5, 99, 100, 123_456, 123_456_789, 1_000_000_000_00])('cents %i like the API', (c) => {
    expect(formatCents(c)).toBe(apiFormatCents(BigInt(c)));
  });

  it('integers, 2 and 1 decimals', () => {
    expect(formatInt(0)).toBe('0');
    expect(formatInt(1234)).toBe('1.234');
    expect(formatInt(1234567)).toBe('1.234.567');
    expect(format2(1234.5)).toBe('1.234,50');
    expect(format2(0)).toBe('0,00');
    expect(format2(52.38)).toBe('52,38');
    expect(format1(12.5)).toBe('12,5');
    expect(format1(1234)).toBe('1.234,0');
  });
});

describe('dashboard CSV', () => {
  it('RFC 4180: CRLF, quoting, numbers as the API gave them, formulas kept as text', () => {
    expect(
      toCsv(
        ['date', 'n'],
        [
          ['2026-11-01', 1.5],
          ['a,b', 'say "hi"'],
          ['=SUM(A1)', -3],
        ],
      ),
    ).toBe('date,n\r\n2026-11-01,1.5\r\n"a,b","say ""hi"""\r\n\'=SUM(A1),-3\r\n');
  });
});
