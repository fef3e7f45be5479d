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

/**
 * The same table for a spreadsheet in a Romanian locale (Excel, LibreOffice with ro-RO): `;` between
 * fields, a decimal comma, no thousands separator (so that every number is read as a number), a UTF-8
 * byte order mark (so that ă, ș, ț show right), CRLF line ends; headers are the page's readable ones.
 */
function roCell(v: Cell): string {
  if (typeof v === 'number') return String(v).replace('.', ',');
  const s = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[";\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const toSpreadsheetCsv = (header: readonly string[], rows: readonly (readonly Cell[])[]): string =>
  '\uFEFF' + [header, ...rows].map((r) => r.map(roCell).join(';')).join('\r\n') + '\r\n';
