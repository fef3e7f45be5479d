import { currentPreset, periodOptions } from './controls.js';
import { COLUMN_HEADERS, kindOf, totalsValue } from './columns.js';
import { toCsv, toSpreadsheetCsv, type Cell } from './csv.js';
import { el } from './dom.js';
import { resolvePreset, todayIn } from './period.js';
import { state } from './state.js';
import { DAY_COLUMNS, type StatsRecord } from './stats.js';
import { shownColumns, shownRows, tableHeadings, type ShownRow } from './workflow-table.js';

/** CSV downloads of the two tables. */
function download(name: string, csv: string): void {
  const url = URL.createObjectURL(new Blob([csv], { type: 'text/csv;charset=utf-8' }));
  const a = el('a', undefined, { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

function fileStem(): string {
  const p = resolvePreset(currentPreset(), todayIn(state.list!.timezone), periodOptions());
  return `mailstats-list${state.list!.list_id}-${p.from}_${p.to}`;
}

const dayRow = (r: StatsRecord) => [r.date, ...DAY_COLUMNS.map((c) => r[c])];

/** The table of days with the API's own values (numbers as the API answered them). */
export function exportDays(): void {
  download(`${fileStem()}-days.csv`, toCsv(['date', ...DAY_COLUMNS], state.days.map(dayRow)));
}

/** The same, for a spreadsheet in a Romanian locale. */
export function exportDaysSpreadsheet(): void {
  const header = ['Date', ...DAY_COLUMNS.map((c) => COLUMN_HEADERS[c])];
  download(`${fileStem()}-days-excel-ro.csv`, toSpreadsheetCsv(header, state.days.map(dayRow)));
}

/**
 * A shown row's cells: its name as on screen, then each column's value as a number (money in units with
 * 2 decimals, rates in %), empty where the screen shows "—" (a ratio with nothing to divide by).
 */
function workflowCells(r: ShownRow): Cell[] {
  return [
    r.name,
    ...shownColumns().map((c): Cell => {
      const v = r.noRates && kindOf(c) === 'rate' ? null : totalsValue(r.totals, c);
      if (v === null) return '';
      return kindOf(c) === 'money' || kindOf(c) === 'aov' ? v / 100 : v;
    }),
  ];
}

/** The per-workflow table as on screen: its headings, its columns in order, its rows (total row last). */
export function exportWorkflows(): void {
  download(`${fileStem()}-workflows.csv`, toCsv(tableHeadings(), shownRows().map(workflowCells)));
}

/** The same, for a spreadsheet in a Romanian locale. */
export function exportWorkflowsSpreadsheet(): void {
  download(
    `${fileStem()}-workflows-excel-ro.csv`,
    toSpreadsheetCsv(tableHeadings(), shownRows().map(workflowCells)),
  );
}
