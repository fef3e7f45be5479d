import { currentPreset } from './controls.js';
import { COLUMN_HEADERS } from './columns.js';
import { toCsv, toSpreadsheetCsv } from './csv.js';
import { el } from './dom.js';
import { resolvePreset, todayIn } from './period.js';
import { state } from './state.js';
import { DAY_COLUMNS, PURCHASE_AND_LOSS_COLUMNS, type StatsRecord } from './stats.js';
import type { WorkflowRow } from './workflow-table.js';

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
  const p = resolvePreset(currentPreset(), todayIn(state.list!.timezone));
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

/** Numbers as the API writes them: money in units with 2 decimals, rates in % (0 when no sends). */
function workflowValues({ totals: t }: WorkflowRow): number[] {
  return [
    t.counts.sends_total,
    t.counts.sends_unique,
    t.counts.opens_unique,
    t.openRate,
    t.counts.clicks_unique,
    t.clickRate,
    t.counts.purchase_count,
    t.revenueRonCents / 100,
    t.revenueEurCents / 100,
    t.aovRonCents / 100,
    t.aovEurCents / 100,
    t.counts.bounce_total,
    t.counts.unsub_total,
  ];
}

/** The workflow table's CSV columns after id and name, in the order `workflowValues` gives them. */
const WORKFLOW_FIELDS = [
  'sends_total',
  'sends_unique',
  'opens_unique',
  'opens_unique_percent',
  'clicks_unique',
  'clicks_unique_percent',
  ...PURCHASE_AND_LOSS_COLUMNS,
] as const;

const workflowRows = () =>
  state.breakdown.map((b) => [b.workflow.workflow_id, b.workflow.name, ...workflowValues(b)]);

/** The table of workflows with the API's field names and values. */
export function exportWorkflows(): void {
  const header = ['workflow_id', 'workflow_name', ...WORKFLOW_FIELDS];
  download(`${fileStem()}-workflows.csv`, toCsv(header, workflowRows()));
}

/** The same, for a spreadsheet in a Romanian locale. */
export function exportWorkflowsSpreadsheet(): void {
  const header = ['Workflow id', 'Workflow', ...WORKFLOW_FIELDS.map((f) => COLUMN_HEADERS[f])];
  download(`${fileStem()}-workflows-excel-ro.csv`, toSpreadsheetCsv(header, workflowRows()));
}
