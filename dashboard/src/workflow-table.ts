import { changeText, ratioChange } from './change-text.js';
import {
  COLUMN_HEADERS,
  formatValue,
  GROUPED_COLUMNS,
  kindOf,
  PEOPLE_HEADERS,
  totalsValue,
  type Column,
} from './columns.js';
import { $, el } from './dom.js';
import type { WorkflowEntry } from './api.js';
import { DAY_COLUMNS, type StatsRecord } from './stats.js';
import { changeOf, type Change, type Totals } from './totals.js';

/**
 * The per-workflow table: the columns of the table of days in the same order, each value with its change
 * against the previous period, and sorting by any column (click or Enter on its header). Under the
 * workflows: "Other workflows" (activity of workflow ids the catalog has no name for, when there is any)
 * and the total row — the API's own answer for the whole set (the query of the cards), never a sum of
 * the rows: a subscriber reached by two workflows on a day is one unique send of the set.
 */
export interface WorkflowRow {
  workflow: WorkflowEntry;
  totals: Totals;
  /** The same workflow over the previous period, when the period has one. */
  previous: Totals | undefined;
  /** Its days as the API answered them (this period): its line on the workflows chart. */
  records?: StatsRecord[];
}

export type Figures = Omit<WorkflowRow, 'workflow'>;

export interface Breakdown {
  rows: WorkflowRow[];
  /** Activity on the list's workflows that the catalog does not name (all workflows shown only). */
  other: Figures | undefined;
  /** Why "other workflows" could not be split off, when it could not. */
  otherNote?: string;
  /** The API's answer for the set of workflows shown, as one query. */
  all: Figures;
  /** The total row's name: every workflow of the list, or the ticked ones. */
  allLabel: string;
  /**
   * The rows are automation.statsByWorkflow's (one request for every workflow): its columns, people
   * first; else the columns of the table of days, from one automation.stats call per workflow.
   */
  grouped?: boolean;
}

/** The columns shown, in order. */
export const columnsOf = (b: Breakdown | undefined): readonly Column[] =>
  b?.grouped ? GROUPED_COLUMNS : DAY_COLUMNS;
const headerOf = (c: Column, b: Breakdown | undefined) =>
  (b?.grouped ? PEOPLE_HEADERS[c] : undefined) ?? COLUMN_HEADERS[c];

type SortKey = 'workflow' | Column;
let sort: { key: SortKey; dir: 'ascending' | 'descending' } = { key: 'workflow', dir: 'ascending' };
let shown: Breakdown | undefined;

/** The sort as the page's address keeps it (`column:direction`), undefined for the default. */
export function sortText(): string | undefined {
  return sort.key === 'workflow' && sort.dir === 'ascending' ? undefined : `${sort.key}:${sort.dir}`;
}

/** The sort from the page's address; anything else leaves the default (by name). */
export function setSortText(text: string | undefined): void {
  const [key, dir] = (text ?? '').split(':');
  const known = key === 'workflow' || ([...DAY_COLUMNS, ...GROUPED_COLUMNS] as string[]).includes(key ?? '');
  sort =
    known && (dir === 'ascending' || dir === 'descending')
      ? { key: key as SortKey, dir }
      : { key: 'workflow', dir: 'ascending' };
  draw();
}

/** Rates of "other workflows": unique opens and sends that only those workflows reached don't make one. */
const RATE_COLUMNS = new Set<Column>(['opens_unique_percent', 'clicks_unique_percent']);

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
      // Of people where the answer counts them, else of the days' unique sends.
      return t.people && p.people
        ? ratioChange(now ?? 0, t.people.recipients, before ?? 0, p.people.recipients, 'points')
        : ratioChange(now ?? 0, t.counts.sends_unique, before ?? 0, p.counts.sends_unique, 'points');
    case 'aov':
      return ratioChange(now ?? 0, t.counts.purchase_count, before ?? 0, p.counts.purchase_count, 'percent');
    default:
      // A count the answer does not have (people of "Other workflows"): no change to give.
      return now === null || before === null ? { kind: 'undefined' } : changeOf(now, before);
  }
}

function cells(t: Totals, previous: Totals | undefined, noRates = false): HTMLElement[] {
  return columnsOf(shown).map((c) => {
    const td = el('td', undefined, { 'data-col': c });
    if (noRates && RATE_COLUMNS.has(c)) {
      td.append(el('span', '—', { class: 'v', title: 'No rate: its unique sends are only a remainder' }));
      return td;
    }
    const v = totalsValue(t, c);
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
const OTHER_NAME = 'Other workflows (not in the catalog)';

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
  const keys: SortKey[] = ['workflow', ...columnsOf(shown)];
  tr.append(
    ...keys.map((k) => {
      const th = el('th', undefined, { scope: 'col', 'data-col': k });
      if (sort.key === k) th.setAttribute('aria-sort', sort.dir);
      const button = el('button', k === 'workflow' ? 'Workflow' : headerOf(k, shown), {
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
        document.dispatchEvent(new Event('viewchange'));
        $('wf').querySelector<HTMLButtonElement>(`th[data-col="${k}"] button`)?.focus();
      });
      th.append(button);
      return th;
    }),
  );
  head.append(tr);
  return head;
}

/**
 * A row's name cell: a long name is cut with an ellipsis (the whole name on hover and focus), its id
 * always shown after it, so that names alike at their start stay told apart; `rank` before it.
 */
export function nameCell(
  name: string,
  opts: { title?: string; id?: number; rank?: number } = {},
): HTMLElement {
  const th = el('th', undefined, { scope: 'row' });
  if (opts.rank !== undefined) th.append(el('span', `${opts.rank}.`, { class: 'rank' }), ' ');
  const full = opts.id === undefined ? name : `${name} (#${opts.id})`;
  th.append(el('span', name, { class: 'name', title: opts.title ?? full }));
  if (opts.id !== undefined) th.append(el('span', ` (#${opts.id})`, { class: 'wid' }));
  return th;
}

/**
 * Names that are cut can take the keyboard focus (which shows them whole); the others stay out of the
 * tab order, so that 50 rows are not 50 more stops on the way through the page.
 */
export function focusableIfCut(root: HTMLElement): void {
  for (const name of root.querySelectorAll<HTMLElement>('th .name')) {
    if (name === document.activeElement) continue;
    if (name.scrollWidth > name.clientWidth) name.tabIndex = 0;
    else name.removeAttribute('tabindex');
  }
}
if (typeof window !== 'undefined')
  window.addEventListener('resize', () => {
    for (const id of ['wf', 'wf-rates']) focusableIfCut($(id));
  });

function draw(): void {
  if (!shown) return;
  const body = el('tbody');
  for (const r of sorted(shown.rows)) {
    const row = el('tr', undefined, { 'data-key': String(r.workflow.workflow_id) });
    row.append(
      nameCell(r.workflow.name || 'Workflow', { id: r.workflow.workflow_id }),
      ...cells(r.totals, r.previous),
    );
    body.append(row);
  }
  const foot = el('tfoot');
  if (shown.other) {
    const other = el('tr', undefined, { 'data-key': 'other' });
    other.append(
      nameCell(OTHER_NAME, {
        title:
          'Activity of workflow ids the catalog has no name for. Unique columns: subscribers that only these workflows reached that day.',
      }),
      ...cells(shown.other.totals, shown.other.previous, true),
    );
    foot.append(other);
  }
  const total = el('tr', undefined, { 'data-key': 'total' });
  total.append(nameCell(shown.allLabel), ...cells(shown.all.totals, shown.all.previous));
  foot.append(total);
  $('wf').replaceChildren(
    el('caption', 'Per-workflow totals; the last row is the API’s answer for the workflows shown together', {
      class: 'sr-only',
    }),
    header(),
    body,
    foot,
  );
  focusableIfCut($('wf'));
}

/** A row of the table as shown: its name cell's text, its figures, and whether its rates show "—". */
export interface ShownRow {
  name: string;
  totals: Totals;
  noRates: boolean;
}

/** The table's rows in the order on screen (the sort chosen), then "Other workflows" and the total row. */
export function shownRows(): ShownRow[] {
  if (!shown) return [];
  return [
    ...sorted(shown.rows).map((r) => ({ name: nameOf(r.workflow), totals: r.totals, noRates: false })),
    ...(shown.other ? [{ name: OTHER_NAME, totals: shown.other.totals, noRates: true }] : []),
    { name: shown.allLabel, totals: shown.all.totals, noRates: false },
  ];
}

/** The table's headings, as on screen: the CSV's header. */
export const tableHeadings = (): string[] => ['Workflow', ...columnsOf(shown).map((c) => headerOf(c, shown))];

/** The columns of the table shown, in order (the CSV's). */
export const shownColumns = (): readonly Column[] => columnsOf(shown);

export function renderBreakdown(b: Breakdown): void {
  shown = b;
  draw();
}

export function clearBreakdown(): void {
  shown = undefined;
  $('wf').replaceChildren();
}
