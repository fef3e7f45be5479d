/**
 * Exact money: decimal strings from ClickHouse → BigInt units → rounded half away from zero. Nothing
 * here passes through binary floating point until the final 2-decimal value becomes a JSON number.
 */

/** "1234.5" → 1234.5 × 10^4 as a BigInt (Decimal(38,4) units). Non-negative inputs only. */
export function toUnits4(decimal: string): bigint {
  const [int = '0', frac = ''] = decimal.split('.');
  return BigInt(int) * 10_000n + BigInt(frac.padEnd(4, '0').slice(0, 4) || '0');
}

/** round(numerator / denominator) half away from zero, for non-negative operands. */
function divRound(numerator: bigint, denominator: bigint): bigint {
  return (2n * numerator + denominator) / (2n * denominator);
}

/** Units of 10^-4 → cents, rounded half away from zero. */
export const unitsToCents = (units: bigint): bigint => divRound(units, 100n);

/** Average order value in cents: exact sum ÷ count, rounded once. */
export const averageCents = (units: bigint, count: number): bigint =>
  count === 0 ? 0n : divRound(units, 100n * BigInt(count));

/**
 * divRound in plain numbers while every step is a safe integer (exact: `%` of safe integers is exact,
 * and so is dividing an exact multiple), else undefined. A year of days costs ~2,000 of these per
 * answer; as BigInts they were a seventh of a 365-day answer's time (BENCHMARKS.md, Growth).
 */
function divRoundSafe(numerator: number, denominator: number): number | undefined {
  const x = 2 * numerator + denominator;
  const y = 2 * denominator;
  if (!Number.isSafeInteger(x) || !Number.isSafeInteger(y)) return undefined;
  return (x - (x % y)) / y;
}

/** 100 × part ÷ whole to 2 decimals, as a number; 0 when whole is 0. */
export function percent(part: number, whole: number): number {
  if (whole === 0) return 0;
  const fast = divRoundSafe(part * 10_000, whole);
  if (fast !== undefined && Number.isSafeInteger(part * 10_000)) return fast / 100;
  return Number(divRound(BigInt(part) * 10_000n, BigInt(whole))) / 100;
}

/**
 * toUnits4 as a plain number while it is surely a safe integer, else undefined (then toUnits4). Digit by
 * digit: slicing and Number() per amount were a tenth of a year's subset answer (BENCHMARKS.md, Growth).
 */
export function safeUnits4(decimal: string): number | undefined {
  const dot = decimal.indexOf('.');
  const intEnd = dot < 0 ? decimal.length : dot;
  if (intEnd > 11) return undefined; // ≥ 10^11 × 10^4 units may not be safe: the BigInt path
  let units = 0;
  for (let i = 0; i < intEnd; i++) units = units * 10 + decimal.charCodeAt(i) - 48;
  const fracEnd = dot < 0 ? 0 : Math.min(decimal.length, dot + 5);
  let scale = 10_000;
  units *= scale;
  for (let i = dot + 1; i < fracEnd; i++) units += (decimal.charCodeAt(i) - 48) * (scale /= 10);
  return units;
}

/**
 * A day's revenue and average order value from its exact Decimal(38,4) sum and purchase count: cents
 * as numbers and formatted, exactly as unitsToCents, averageCents, centsToNumber and formatCents give
 * them; in plain numbers while that is exact, else through BigInt.
 */
export function dayMoney(
  decimal: string,
  count: number,
): { value: number; formatted: string; aov: number; formattedAov: string } {
  const units = safeUnits4(decimal);
  if (units !== undefined) {
    const cents = divRoundSafe(units, 100);
    const aov = count === 0 ? 0 : divRoundSafe(units, 100 * count);
    if (cents !== undefined && aov !== undefined && Number.isSafeInteger(100 * count))
      return {
        value: cents / 100,
        formatted: formatCents(cents),
        aov: aov / 100,
        formattedAov: formatCents(aov),
      };
  }
  const exact = toUnits4(decimal);
  const [cents, aov] = [unitsToCents(exact), averageCents(exact, count)];
  return {
    value: centsToNumber(cents),
    formatted: formatCents(cents),
    aov: centsToNumber(aov),
    formattedAov: formatCents(aov),
  };
}

export const centsToNumber = (cents: bigint): number => Number(cents) / 100;

/** 123456789n → "1.234.567,89": two decimals, decimal comma, '.' between thousands. */
export function formatCents(cents: bigint | number): string {
  const s = cents.toString().padStart(3, '0');
  const digits = s.slice(0, -2);
  // Groups of three from the right, by hand: a regular expression per amount was most of this.
  let int = digits.slice(0, digits.length % 3 || 3);
  for (let i = int.length; i < digits.length; i += 3) int += `.${digits.slice(i, i + 3)}`;
  return `${int},${s.slice(-2)}`;
}
