import { drawChart, PALETTE, type SeriesSpec } from './charts.js';
import { state } from './state.js';
import type { WorkflowRow } from './workflow-table.js';
import { currenciesOf, type Reported } from './currency.js';
import { aovSeries, countSeries, frameOf, rateSeries, xsOf, type DailyFrame } from './daily.js';
import { defaultGrouping, groupFrame, type Grouping } from './grouping.js';
import { $, el } from './dom.js';
import { format2, formatCents, formatInt } from './format.js';
import type { StatsRecord } from './stats.js';
import type { Totals } from './totals.js';

/**
 * The daily charts of the page over the whole period asked for: activity, rates, revenue, AOV. The
 * previous period is laid over each chart's main line, dotted, day by day (its first day over this
 * period's first day).
 */
export interface ChartPeriod {
  records: StatsRecord[];
  from: string;
  to: string;
  totals: Totals;
}

const total = (n: number) => `${formatInt(n)} in all`;
const rateText = (t: Totals, r: number) => (t.counts.sends_unique === 0 ? '—' : `${format2(r)} % overall`);
const aovText = (t: Totals, c: number) => (t.counts.purchase_count === 0 ? '—' : `${formatCents(c)} overall`);

/** The previous period's values over this period's days: cut or padded with gaps to its length. */
const aligned = (values: (number | null)[], length: number): (number | null)[] =>
  Array.from({ length }, (_, i) => (i < values.length ? values[i]! : null));

const revenueOf = (f: DailyFrame, c: Reported) =>
  countSeries(f, c === 'RON' ? 'purchases_value_ron' : 'purchases_value_eur');
const revenueCents = (t: Totals, c: Reported) => (c === 'RON' ? t.revenueRonCents : t.revenueEurCents);
const aovCents = (t: Totals, c: Reported) => (c === 'RON' ? t.aovRonCents : t.aovEurCents);
const aovOf = (f: DailyFrame, c: Reported) => aovSeries(f, c === 'RON' ? 'ron' : 'eur');

let last: { now: ChartPeriod; before: ChartPeriod | undefined; currency: string } | undefined;

/**
 * The currency the money charts show: one at a time (two currencies on two axes of their own ranges
 * made lines where one is the other ÷ 5 look as if they diverged). The list's own first; the picker
 * above the charts switches.
 */
export function moneyCurrency(listCurrency: string): Reported {
  const picker = $<HTMLSelectElement>('chart-currency');
  const { main, other } = currenciesOf(listCurrency);
  if (picker.dataset.list !== listCurrency) {
    picker.replaceChildren(
      ...[main, other].map((c) => {
        const o = document.createElement('option');
        o.value = c;
        o.textContent = c === main ? `${c} (the list's)` : c;
        return o;
      }),
    );
    picker.value = main;
    picker.dataset.list = listCurrency;
  }
  // A currency from the page's address, once.
  if (state.pending.money === main || state.pending.money === other) picker.value = state.pending.money;
  delete state.pending.money;
  return picker.value === other ? other : main;
}

/**
 * The grouping of the charts' points: the picker's, or for a new period the default for its length
 * (the picker then shows it).
 */
function grouping(from: string, to: string, days: number): Grouping {
  const picker = $<HTMLSelectElement>('chart-group');
  const period = `${from}/${to}`;
  const wanted = state.pending.points;
  if (wanted === 'day' || wanted === 'week' || wanted === 'month') {
    // Points from the page's address, once: kept as if picked.
    picker.value = wanted;
    picker.dataset.period = period;
    picker.dataset.chosen = 'true';
  } else if (picker.dataset.period !== period) {
    picker.value = defaultGrouping(days);
    picker.dataset.period = period;
    delete picker.dataset.chosen;
  }
  delete state.pending.points;
  return picker.value === 'week' || picker.value === 'month' ? picker.value : 'day';
}

/** Chart titles name the points shown: "per day", "per week", "per month". */
function captionsFor(by: Grouping): void {
  const per = `per ${by}`;
  $('cap-activity').textContent = `Sends, opens, clicks (unique subscribers ${per})`;
  $('cap-rates').textContent = `Open and click rate ${per} (% of unique sends)`;
  $('cap-revenue').textContent = `Revenue ${per} (in the currency picked above, from 0)`;
  $('cap-aov').textContent = `Average order value ${per} (from 0)`;
}

/** The charts again in the currency or grouping picked (the figures are those already shown). */
export function redrawMoney(): void {
  if (last) renderCharts(last.now, last.before, last.currency);
  if (lastBars) renderWorkflowBars(lastBars);
}

/** At most this many workflows side by side: the rest are in the table below. */
const MAX_BARS = 10;
let lastBars: WorkflowRow[] | undefined;

export type BarMeasure = 'sends' | 'revenue' | 'purchases';

export const barMeasure = (): BarMeasure => {
  const v = $<HTMLSelectElement>('wf-bars-measure').value;
  return v === 'revenue' || v === 'purchases' ? v : 'sends';
};

/**
 * Workflows side by side, readable at any width: one bar per workflow of its total over the period —
 * sends (total), revenue in the currency picked for the charts, or purchases — biggest first, the ticked
 * ones or the 10 biggest; from the same per-workflow answers as the table.
 */
export function renderWorkflowBars(rows: WorkflowRow[]): void {
  lastBars = rows;
  const measure = barMeasure();
  const money = moneyCurrency(state.list?.currency ?? 'RON');
  const valueOf = (r: WorkflowRow) =>
    measure === 'revenue'
      ? revenueCents(r.totals, money)
      : measure === 'purchases'
        ? r.totals.counts.purchase_count
        : r.totals.counts.sends_total;
  const text = (v: number) => (measure === 'revenue' ? `${formatCents(v)} ${money}` : formatInt(v));
  const ranked = [...rows].sort((a, b) => valueOf(b) - valueOf(a));
  const chosen = ranked.slice(0, MAX_BARS);
  const top = Math.max(1, ...chosen.map(valueOf));
  $('wf-bars').replaceChildren(
    ...chosen.map((r) => {
      const v = valueOf(r);
      const li = el('li', undefined, {
        class: 'bar',
        'data-workflow': String(r.workflow.workflow_id),
        'data-value': String(v),
      });
      const name = `${r.workflow.name || 'Workflow'} (#${r.workflow.workflow_id})`;
      li.append(el('span', name, { class: 'bar-name', title: name }));
      const track = el('span', undefined, { class: 'bar-track' });
      const fill = el('span', undefined, { class: 'bar-fill' });
      fill.style.width = `${((100 * v) / top).toFixed(2)}%`;
      track.append(fill);
      li.append(track, el('span', text(v), { class: 'bar-value' }));
      return li;
    }),
  );
  $('wf-bars-which').textContent =
    rows.length > chosen.length
      ? `The ${chosen.length} biggest of ${rows.length} workflows; all are in the table below.`
      : '';
}

export function clearWorkflowBars(): void {
  lastBars = undefined;
  $('wf-bars').replaceChildren();
  $('wf-bars-which').textContent = '';
}

export function renderCharts(now: ChartPeriod, before: ChartPeriod | undefined, currency: string): void {
  last = { now, before, currency };
  const days = frameOf(now.records, now.from, now.to);
  const by = grouping(now.from, now.to, days.dates.length);
  captionsFor(by);
  $('charts-group-note').textContent =
    by === 'day'
      ? 'One point per day.'
      : `One point per ${by}, from its first day: counts and money are sums of the ${by}'s days (a unique count too: subscribers once per day, added up), rates and AOV ratios of those sums.`;
  const f = groupFrame(days, by);
  const p = before && groupFrame(frameOf(before.records, before.from, before.to), by);
  const xs = xsOf(f);
  const t = now.totals;
  const pt = before?.totals;
  /** The dotted line of the previous period, when there is one. */
  const prev = (
    spec: Omit<SeriesSpec, 'values' | 'summary' | 'dotted'>,
    values: (p: DailyFrame) => (number | null)[],
    summary: (t: Totals) => string,
  ): SeriesSpec[] =>
    p && pt
      ? [
          {
            ...spec,
            label: `${spec.label}, previous period`,
            values: aligned(values(p), xs.length),
            summary: summary(pt),
            dotted: true,
          },
        ]
      : [];

  const sends: SeriesSpec = {
    label: 'Sends (unique)',
    color: PALETTE.blue,
    values: countSeries(f, 'sends_unique'),
    summary: total(t.counts.sends_unique),
  };
  drawChart(
    $('chart-activity'),
    xs,
    [
      sends,
      {
        label: 'Opens (unique)',
        color: PALETTE.green,
        values: countSeries(f, 'opens_unique'),
        summary: total(t.counts.opens_unique),
      },
      {
        label: 'Clicks (unique)',
        color: PALETTE.orange,
        values: countSeries(f, 'clicks_unique'),
        summary: total(t.counts.clicks_unique),
      },
      ...prev(
        { label: 'Sends (unique)', color: PALETTE.blue },
        (q) => countSeries(q, 'sends_unique'),
        (q) => total(q.counts.sends_unique),
      ),
    ],
    'count',
  );
  drawChart(
    $('chart-rates'),
    xs,
    [
      {
        label: 'Open rate',
        color: PALETTE.green,
        values: rateSeries(f, 'opens'),
        summary: rateText(t, t.openRate),
      },
      {
        label: 'Click rate',
        color: PALETTE.orange,
        values: rateSeries(f, 'clicks'),
        summary: rateText(t, t.clickRate),
      },
      ...prev(
        { label: 'Open rate', color: PALETTE.green },
        (q) => rateSeries(q, 'opens'),
        (q) => rateText(q, q.openRate),
      ),
    ],
    'percent',
  );
  const money = moneyCurrency(currency);
  drawChart(
    $('chart-revenue'),
    xs,
    [
      {
        label: money,
        color: PALETTE.purple,
        values: revenueOf(f, money),
        summary: `${formatCents(revenueCents(t, money))} in all`,
      },
      ...prev(
        { label: money, color: PALETTE.purple },
        (q) => revenueOf(q, money),
        (q) => `${formatCents(revenueCents(q, money))} in all`,
      ),
    ],
    'money',
    [money],
  );
  drawChart(
    $('chart-aov'),
    xs,
    [
      {
        label: `AOV ${money}`,
        color: PALETTE.purple,
        values: aovOf(f, money),
        summary: aovText(t, aovCents(t, money)),
      },
      ...prev(
        { label: `AOV ${money}`, color: PALETTE.purple },
        (q) => aovOf(q, money),
        (q) => aovText(q, aovCents(q, money)),
      ),
    ],
    'money',
    [money],
  );
}
