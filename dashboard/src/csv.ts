/** RFC 4180 CSV: comma-separated, CRLF line ends, fields quoted when they hold a comma, quote or newline. */
export type Cell = string | number;

function cell(v: Cell): string {
  if (typeof v === 'number') return String(v);
  // A text cell that a spreadsheet would run as a formula (a workflow name such as "=cmd") is kept as text.
  const s = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const toCsv = (header: readonly string[], rows: readonly (readonly Cell[])[]): string =>
  [header, ...rows].map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
