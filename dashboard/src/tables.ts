import type { Cell } from './csv.js';
import { $, el } from './dom.js';
import { format2, formatCents, formatInt } from './format.js';
import type { BreakdownRow } from './state.js';
import { DAY_COLUMNS, type StatsRecord } from './stats.js';

/** The table of days and the per-workflow table. */
const DAY_HEADERS: Record<(typeof DAY_COLUMNS)[number], string> = {
  sends_unique: 'Sends (unique)',
  sends_total: 'Sends',
  opens_unique: 'Opens (unique)',
  opens_total: 'Opens',
  opens_unique_percent: 'Open rate %',
  clicks_unique: 'Clicks (unique)',
  clicks_total: 'Clicks',
  clicks_unique_percent: 'Click rate %',
  purchase_count: 'Purchases',
  purchases_value_ron: 'Revenue RON',
  purchases_value_eur: 'Revenue EUR',
  purchases_value_aov_ron: 'AOV RON',
  purchases_value_aov_eur: 'AOV EUR',
  bounce_total: 'Bounces',
  unsub_total: 'Unsubscribes',
  spam_total: 'Spam',
  events_ok: 'Events ok',
  events_failed: 'Events failed',
  conditions_ok: 'Conditions ok',
  conditions_failed: 'Conditions failed',
  actions_ok: 'Actions ok',
  actions_failed: 'Actions failed',
};

/** Money as the API formatted it; rates with 2 decimals; counts with thousands separators. */
function dayCell(r: StatsRecord, c: (typeof DAY_COLUMNS)[number]): string {
  switch (c) {
    case 'purchases_value_ron':
      return r.formatted_revenue_ron;
    case 'purchases_value_eur':
      return r.formatted_revenue_eur;
    case 'purchases_value_aov_ron':
      return r.formatted_value_aov_ron;
    case 'purchases_value_aov_eur':
      return r.formatted_value_aov_eur;
    case 'opens_unique_percent':
    case 'clicks_unique_percent':
      return format2(r[c]);
    default:
      return formatInt(r[c]);
  }
}

function table(
  target: HTMLElement,
  caption: string,
  headers: string[],
  rows: string[][],
  keys: string[] = [],
): void {
  const head = el('thead');
  const tr = el('tr');
  tr.append(...headers.map((h) => el('th', h, { scope: 'col' })));
  head.append(tr);
  const body = el('tbody');
  for (const [i, row] of rows.entries()) {
    const r = el('tr', undefined, keys[i] ? { 'data-key': keys[i] } : {});
    r.append(...row.map((v, j) => (j === 0 ? el('th', v, { scope: 'row' }) : el('td', v))));
    body.append(r);
  }
  target.replaceChildren(el('caption', caption, { class: 'sr-only' }), head, body);
}

export function renderDays(records: StatsRecord[]): void {
  table(
    $('days'),
    'Daily figures',
    ['Date', ...DAY_COLUMNS.map((c) => DAY_HEADERS[c])],
    records.map((r) => [r.date, ...DAY_COLUMNS.map((c) => dayCell(r, c))]),
    records.map((r) => r.date),
  );
  if (records.length === 0) $('days').append(el('caption', 'No activity in this period.'));
}

const BREAKDOWN_HEADERS = [
  'Workflow',
  'Sends',
  'Sends (unique)',
  'Opens (unique)',
  'Open rate %',
  'Clicks (unique)',
  'Click rate %',
  'Purchases',
  'Revenue RON',
  'Revenue EUR',
  'AOV RON',
  'AOV EUR',
  'Bounces',
  'Unsubscribes',
];

export function breakdownRow(b: BreakdownRow): { shown: string[]; raw: Cell[] } {
  const t = b.totals;
  const raw: Cell[] = [
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
  const shown = [
    formatInt(t.counts.sends_total),
    formatInt(t.counts.sends_unique),
    formatInt(t.counts.opens_unique),
    format2(t.openRate),
    formatInt(t.counts.clicks_unique),
    format2(t.clickRate),
    formatInt(t.counts.purchase_count),
    formatCents(t.revenueRonCents),
    formatCents(t.revenueEurCents),
    formatCents(t.aovRonCents),
    formatCents(t.aovEurCents),
    formatInt(t.counts.bounce_total),
    formatInt(t.counts.unsub_total),
  ];
  return { shown, raw };
}

export function renderBreakdown(rows: BreakdownRow[]): void {
  table(
    $('wf'),
    'Per-workflow totals',
    BREAKDOWN_HEADERS,
    rows.map((b) => [
      `${b.workflow.name || 'Workflow'} (#${b.workflow.workflow_id})`,
      ...breakdownRow(b).shown,
    ]),
    rows.map((b) => String(b.workflow.workflow_id)),
  );
}
