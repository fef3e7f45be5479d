import { changeText, ratioChange } from './change-text.js';
import { COLUMN_HEADERS, formatValue, kindOf, totalsValue, type Column } from './columns.js';
import { $, el } from './dom.js';
import type { WorkflowEntry } from './api.js';
import { DAY_COLUMNS } from './stats.js';
import { changeOf, type Change, type Totals } from './totals.js';

/**
 * The per-workflow table: the columns of the table of days in the same order, each value with its change
 * against the previous period, a totals row, and sorting by any column (click or Enter on its header).
 */
export interface WorkflowRow {
  workflow: WorkflowEntry;
  totals: Totals;
  /** The same workflow over the previous period, when the period has one. */
  previous: Totals | undefined;
}

type SortKey = 'workflow' | Column;
let sort: { key: SortKey; dir: 'ascending' | 'descending' } = { key: 'workflow', dir: 'ascending' };
let shown: { rows: WorkflowRow[]; all: Omit<WorkflowRow, 'workflow'> } | undefined;

const FEWER_IS_BETTER = new Set<Column>([
  'bounce_total',
  'unsub_total',
  'spam_total',
  'events_failed',
  'conditions_failed',
  'actions_failed',
]);

function changeIn(c: Column, t: Totals, p: Totals): Change {
  const [now, before] = [totalsValue(t, c), totalsValue(p, c)];
  switch (kindOf(c)) {
    case 'rate':
      return ratioChange(now ?? 0, t.counts.sends_unique, before ?? 0, p.counts.sends_unique, 'points');
    case 'aov':
      return ratioChange(now ?? 0, t.counts.purchase_count, before ?? 0, p.counts.purchase_count, 'percent');
    default:
      return changeOf(now!, before!);
  }
}

function cells(t: Totals, previous: Totals | undefined): HTMLElement[] {
  return DAY_COLUMNS.map((c) => {
    const v = totalsValue(t, c);
    const td = el('td', undefined, { 'data-col': c });
    td.append(el('span', formatValue(v, kindOf(c)), { class: 'v' }));
    if (previous) {
      const ch = changeText(changeIn(c, t, previous), FEWER_IS_BETTER.has(c));
      td.append(
        el('span', ch.text, {
          class: `d ${ch.cls}`,
          title: `before: ${formatValue(totalsValue(previous, c), kindOf(c))}`,
        }),
      );
    }
    return td;
  });
}

const nameOf = (w: WorkflowEntry) => `${w.name || 'Workflow'} (#${w.workflow_id})`;

function compare(a: WorkflowRow, b: WorkflowRow): number {
  if (sort.key === 'workflow')
    return nameOf(a.workflow).localeCompare(nameOf(b.workflow), 'ro', { numeric: true });
  const [x, y] = [totalsValue(a.totals, sort.key), totalsValue(b.totals, sort.key)];
  // Undefined ratios ("—") last, whichever the direction.
  if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
  return sort.dir === 'ascending' ? x - y : y - x;
}

function sorted(rows: WorkflowRow[]): WorkflowRow[] {
  const out = [...rows].sort(compare);
  return sort.key === 'workflow' && sort.dir === 'descending' ? out.reverse() : out;
}

function header(): HTMLElement {
  const head = el('thead');
  const tr = el('tr');
  const keys: SortKey[] = ['workflow', ...DAY_COLUMNS];
  tr.append(
    ...keys.map((k) => {
      const th = el('th', undefined, { scope: 'col', 'data-col': k });
      if (sort.key === k) th.setAttribute('aria-sort', sort.dir);
      const button = el('button', k === 'workflow' ? 'Workflow' : COLUMN_HEADERS[k], {
        type: 'button',
        class: 'sort',
      });
      button.addEventListener('click', () => {
        // Numbers sort biggest first on the first click; names A to Z.
        const first = k === 'workflow' ? 'ascending' : 'descending';
        sort = {
          key: k,
          dir: sort.key === k ? (sort.dir === 'ascending' ? 'descending' : 'ascending') : first,
        };
        draw();
        $('wf').querySelector<HTMLButtonElement>(`th[data-col="${k}"] button`)?.focus();
      });
      th.append(button);
      return th;
    }),
  );
  head.append(tr);
  return head;
}

function draw(): void {
  if (!shown) return;
  const body = el('tbody');
  for (const r of sorted(shown.rows)) {
    const row = el('tr', undefined, { 'data-key': String(r.workflow.workflow_id) });
    row.append(el('th', nameOf(r.workflow), { scope: 'row' }), ...cells(r.totals, r.previous));
    body.append(row);
  }
  const foot = el('tfoot');
  const total = el('tr', undefined, { 'data-key': 'total' });
  total.append(
    el('th', 'All shown workflows', { scope: 'row' }),
    ...cells(shown.all.totals, shown.all.previous),
  );
  foot.append(total);
  $('wf').replaceChildren(
    el('caption', 'Per-workflow totals; the last row sums the workflows shown', { class: 'sr-only' }),
    header(),
    body,
    foot,
  );
}

export function renderBreakdown(rows: WorkflowRow[], all: Omit<WorkflowRow, 'workflow'>): void {
  shown = { rows, all };
  draw();
}

export function clearBreakdown(): void {
  shown = undefined;
  $('wf').replaceChildren();
}
