import { describe, expect, it } from 'vitest';
import { toCsv, toSpreadsheetCsv } from '../../dashboard/src/csv.js';

/** The dashboard's spreadsheet export for a Romanian locale beside the plain RFC 4180 CSV. */
describe('dashboard CSV for a spreadsheet in ro-RO', () => {
  const header = ['Date', 'Revenue RON', 'Workflow'];
  const rows = [
    ['2026-11-02', 1234.5, 'Coș abandonat; reminder'],
    ['2026-11-03', 0.07, '=HYPERLINK("x")'],
  ];

  it('starts with a UTF-8 byte order mark and separates fields with ;', () => {
    const csv = toSpreadsheetCsv(header, rows);
    expect(csv.charCodeAt(0)).toBe(0xfeff);
    expect(csv.slice(1).split('\r\n')[0]).toBe('Date;Revenue RON;Workflow');
    expect(new TextEncoder().encode(csv).slice(0, 3)).toEqual(new Uint8Array([0xef, 0xbb, 0xbf]));
  });

  it('writes numbers with a decimal comma and no thousands separator; quotes text holding ;', () => {
    const lines = toSpreadsheetCsv(header, rows).slice(1).split('\r\n');
    expect(lines[1]).toBe('2026-11-02;1234,5;"Coș abandonat; reminder"');
    // A formula-looking name stays text; its quotes are doubled inside a quoted field.
    expect(lines[2]).toBe(`2026-11-03;0,07;"'=HYPERLINK(""x"")"`);
    expect(lines.at(-1)).toBe('');
  });

  it('leaves the plain CSV as it was (comma, decimal point, no BOM)', () => {
    expect(toCsv(header, rows).split('\r\n')[1]).toBe('2026-11-02,1234.5,Coș abandonat; reminder');
  });
});
