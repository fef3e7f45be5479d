import { describe, expect, it } from 'vitest';
import {
  averageCents,
  dayMoney,
  centsToNumber,
  formatCents,
  percent,
  safeUnits4,
  toUnits4,
  unitsToCents,
} from '../../shared/money.js';

/** A decimal string as the answer formats it: exact units → cents (rounded) → "1.234,50". */
const fmt = (decimal: string) => formatCents(unitsToCents(toUnits4(decimal)));
/** A decimal string as the answer's JSON number. */
const num = (decimal: string) => centsToNumber(unitsToCents(toUnits4(decimal)));

describe('toUnits4: decimal strings → exact 10^-4 units', () => {
  it.each([
    ['0', 0n],
    ['7', 70_000n],
    ['0.0001', 1n],
    ['1234.5', 12_345_000n],
    ['19.9999', 199_999n],
    ['1234567.891', 12_345_678_910n],
    ['0.1', 1_000n],
    ['12.30', 123_000n],
  ])('%s → %s', (s, units) => {
    expect(toUnits4(s)).toBe(units);
  });
  it('sums exactly where binary floating point does not', () => {
    expect(0.1 + 0.2).not.toBe(0.3); // the reason money is not summed in floats
    expect(toUnits4('0.1') + toUnits4('0.2')).toBe(toUnits4('0.3'));
    expect(fmt('0.3')).toBe('0,30');
  });
  it('holds values beyond 2^53 units exactly', () => {
    // 99,999,999,999,999.9999 is 10^18 − 1 units, far beyond Number's exact range.
    expect(toUnits4('99999999999999.9999')).toBe(999_999_999_999_999_999n);
  });
});

describe('formatCents: two decimals, decimal comma, "." between thousands (docs/api.md "Answer")', () => {
  it('the examples of docs/api.md "Answer"', () => {
    expect(fmt('0')).toBe('0,00');
    expect(fmt('1234.5')).toBe('1.234,50');
    expect(fmt('1234567.891')).toBe('1.234.567,89');
  });
  it.each([
    [0n, '0,00'],
    [1n, '0,01'],
    [5n, '0,05'],
    [10n, '0,10'],
    [99n, '0,99'],
    [100n, '1,00'],
    [99_999n, '999,99'],
    [100_000n, '1.000,00'],
    [123_456n, '1.234,56'],
    [12_345_678n, '123.456,78'],
    [100_000_000n, '1.000.000,00'],
    [12_345_678_901_234n, '123.456.789.012,34'],
  ])('%s cents → %s', (cents, text) => {
    expect(formatCents(cents)).toBe(text);
  });
  it('rounding can carry into a new thousands group', () => {
    expect(fmt('999.995')).toBe('1.000,00');
    expect(fmt('999999.9949')).toBe('999.999,99');
    expect(fmt('999999.995')).toBe('1.000.000,00');
  });
});

describe('unitsToCents: half away from zero, on the exact decimal', () => {
  it.each([
    ['0.005', 1n],
    ['0.0049', 0n],
    ['0.0051', 1n],
    ['0.015', 2n],
    ['0.025', 3n],
    ['1.0049', 100n],
    ['1.005', 101n],
    ['2.675', 268n],
    ['2.6749', 267n],
    ['1.0000', 100n],
    ['0.0001', 0n],
  ])('%s → %s cents', (s, cents) => {
    expect(unitsToCents(toUnits4(s))).toBe(cents);
  });
  it('2.675 becomes 2.68, where float rounding gives 2.67', () => {
    // 2.675 is stored as 2.67499999999999982236431605997495353221893310546875 in binary.
    expect(Number((2.675).toFixed(2))).toBe(2.67);
    expect(num('2.675')).toBe(2.68);
    expect(fmt('2.675')).toBe('2,68');
  });
  it('1.005 becomes 1.01, where float rounding gives 1.00', () => {
    expect(Math.round(1.005 * 100) / 100).toBe(1);
    expect(num('1.005')).toBe(1.01);
  });
  it('rounds the sum once, not each addend', () => {
    // 0.0049 × 3 = 0.0147 → 0.01; rounding each first would give 0.00.
    expect(unitsToCents(toUnits4('0.0049') * 3n)).toBe(1n);
    // 0.005 + 0.005 = 0.01 → 0.01; rounding each first would give 0.02.
    expect(unitsToCents(toUnits4('0.005') + toUnits4('0.005'))).toBe(1n);
  });
});

describe('centsToNumber', () => {
  it.each([
    [0n, 0],
    [1n, 0.01],
    [268n, 2.68],
    [123_456n, 1234.56],
    [123_456_789n, 1234567.89],
  ])('%s → %s', (cents, n) => {
    expect(centsToNumber(cents)).toBe(n);
  });
});

describe('averageCents: exact sum ÷ purchase count, rounded once (AOV)', () => {
  it('0 when there are no purchases', () => {
    expect(averageCents(0n, 0)).toBe(0n);
    expect(averageCents(toUnits4('12.34'), 0)).toBe(0n);
  });
  it('one purchase: its own value, rounded', () => {
    expect(averageCents(toUnits4('19.99'), 1)).toBe(1999n);
    expect(averageCents(toUnits4('2.675'), 1)).toBe(268n);
  });
  it('10 ÷ 3 = 3.333… → 3.33; 20 ÷ 3 = 6.666… → 6.67', () => {
    expect(averageCents(toUnits4('10'), 3)).toBe(333n);
    expect(averageCents(toUnits4('20'), 3)).toBe(667n);
  });
  it('an exact half rounds away from zero', () => {
    // 0.05 ÷ 2 = 0.025 → 0.03; 5.35 ÷ 2 = 2.675 → 2.68.
    expect(averageCents(toUnits4('0.05'), 2)).toBe(3n);
    expect(averageCents(toUnits4('2.675') * 2n, 2)).toBe(268n);
    expect(averageCents(toUnits4('5.35'), 2)).toBe(268n);
  });
  it('divides the exact sum, not the rounded one', () => {
    // Two purchases of 0.0049: exact sum 0.0098, AOV 0.0049 → 0.00. From the rounded sum (0.01) it
    // would be 0.005 → 0.01.
    expect(averageCents(toUnits4('0.0049') * 2n, 2)).toBe(0n);
    // Two of 0.0149: exact sum 0.0298, AOV 0.0149 → 0.01. From the rounded sum (0.03) it would be
    // 0.015 → 0.02.
    expect(averageCents(toUnits4('0.0149') * 2n, 2)).toBe(1n);
  });
  it('formats like revenue', () => {
    expect(formatCents(averageCents(toUnits4('3703.5'), 3))).toBe('1.234,50');
  });
});

describe('percent: 100 × part ÷ whole to 2 decimals, half away from zero', () => {
  it.each([
    [1, 3, 33.33],
    [2, 3, 66.67],
    [1, 8, 12.5],
    [1, 16, 6.25],
    [1, 160, 0.63], // 0.625
    [1, 1600, 0.06], // 0.0625
    [1, 80_000, 0], // 0.00125
    [1, 40_000, 0], // 0.0025: the third decimal is 2
    [3, 7, 42.86],
    [5, 5, 100],
    [0, 5, 0],
    [1, 200, 0.5],
    [7, 3, 233.33],
  ])('%s of %s → %s', (part, whole, expected) => {
    expect(percent(part, whole)).toBe(expected);
  });
  it('0 when the whole is 0', () => {
    expect(percent(0, 0)).toBe(0);
    expect(percent(5, 0)).toBe(0);
  });
  it('an exact half at the third decimal rounds away from zero', () => {
    // 100 × 1 ÷ 400 = 0.25 exactly; 100 × 1 ÷ 160 = 0.625 → 0.63; 100 × 3 ÷ 8000 = 0.0375 → 0.04.
    expect(percent(1, 400)).toBe(0.25);
    expect(percent(1, 160)).toBe(0.63);
    expect(percent(3, 8000)).toBe(0.04);
  });
});

describe('dayMoney: a day revenue and AOV, the same as the BigInt path at every size', () => {
  /** The exact path, term by term (what toStatsRecord computed before dayMoney). */
  const exact = (decimal: string, count: number) => {
    const units = toUnits4(decimal);
    const [cents, aov] = [unitsToCents(units), averageCents(units, count)];
    return {
      value: centsToNumber(cents),
      formatted: formatCents(cents),
      aov: centsToNumber(aov),
      formattedAov: formatCents(aov),
    };
  };
  it.each([
    ['0.0000', 0],
    ['0.0050', 1],
    ['0.0049', 1],
    ['2.6750', 1],
    ['1234567.8950', 3],
    ['10.0000', 3],
    ['20.0000', 3],
    ['999.9950', 7],
    ['450359962737.0495', 1], // 2 × units + 100 is just past 2^53: the BigInt path
    ['450359962737.0496', 2],
    ['225179981368.5247', 1], // just below it: the plain-number path
    ['99999999999999999999999999999999.9999', 12345], // Decimal(38,4)'s largest
  ] as const)('%s over %s purchases', (decimal, count) => {
    expect(dayMoney(decimal, count)).toEqual(exact(decimal, count));
  });
  it('agrees with the BigInt path on 20,000 seeded amounts and counts', () => {
    let seed = 42;
    const rnd = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    for (let i = 0; i < 20_000; i++) {
      const digits = 1 + Math.floor(rnd() * 16);
      const int = String(Math.floor(rnd() * 10 ** digits));
      const frac = String(Math.floor(rnd() * 10_000)).padStart(4, '0');
      const count = Math.floor(rnd() * (rnd() < 0.5 ? 10 : 1e9));
      expect(dayMoney(`${int}.${frac}`, count), `${int}.${frac} / ${count}`).toEqual(
        exact(`${int}.${frac}`, count),
      );
    }
  });
});

describe('safeUnits4: the plain-number units of every decimal shape the engine sends', () => {
  it.each(['0', '7', '12.3', '12.34', '0.0001', '5.', '99999999999.9999', '12.34567'])('%s', (decimal) => {
    expect(safeUnits4(decimal)).toBe(Number(toUnits4(decimal)));
  });
  it('leaves 12 or more integer digits to the BigInt path', () => {
    expect(safeUnits4('100000000000.5')).toBeUndefined();
  });
});

describe('percent: the plain-number path and the BigInt one agree', () => {
  it('on seeded parts and wholes, small and past 2^53 ÷ 20,000', () => {
    const big = (part: number, whole: number) =>
      whole === 0 ? 0 : Number((2n * BigInt(part) * 10_000n + BigInt(whole)) / (2n * BigInt(whole))) / 100;
    let seed = 7;
    const rnd = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    for (let i = 0; i < 20_000; i++) {
      const whole = Math.floor(rnd() * 10 ** (1 + Math.floor(rnd() * 15)));
      const part = Math.floor(rnd() * (whole + 1));
      expect(percent(part, whole), `${part} / ${whole}`).toBe(big(part, whole));
    }
  });
});
