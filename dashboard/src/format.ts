/**
 * Numbers as the API formats them (docs/api.md "Answer", ro-RO): decimal comma and `.` between every group of
 * thousands (`1234.5 → "1.234,50"`). Written out rather than left to Intl, whose ro-RO leaves 4-digit
 * numbers ungrouped ("1234,50") and so would disagree with the API's own formatted fields.
 */
const group = (digits: string): string => digits.replace(/\B(?=(\d{3})+(?!\d))/g, '.');

/** 1234567 → "1.234.567". */
export function formatInt(n: number): string {
  return (n < 0 ? '-' : '') + group(String(Math.abs(Math.trunc(n))));
}

/** Integer cents → "1.234,50". */
export function formatCents(cents: number): string {
  const s = String(Math.abs(cents)).padStart(3, '0');
  return `${cents < 0 ? '-' : ''}${group(s.slice(0, -2))},${s.slice(-2)}`;
}

/** A number with at most 2 decimals (as the API's percentages and money are) → "1.234,50". */
export const format2 = (n: number): string => formatCents(Math.round(n * 100));

/** One decimal: "12,5". */
export function format1(n: number): string {
  const tenths = Math.round(Math.abs(n) * 10);
  return `${n < 0 ? '-' : ''}${group(String(Math.trunc(tenths / 10)))},${tenths % 10}`;
}
