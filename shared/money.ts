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

/** 100 × part ÷ whole to 2 decimals, as a number; 0 when whole is 0. */
export function percent(part: number, whole: number): number {
  if (whole === 0) return 0;
  return Number(divRound(BigInt(part) * 10_000n, BigInt(whole))) / 100;
}

export const centsToNumber = (cents: bigint): number => Number(cents) / 100;

/** 123456789n → "1.234.567,89": two decimals, decimal comma, '.' between thousands. */
export function formatCents(cents: bigint): string {
  const s = cents.toString().padStart(3, '0');
  const int = s.slice(0, -2).replace(/\B(?=(\d{3})+(?!\d))/g, '.');
  return `${int},${s.slice(-2)}`;
}
