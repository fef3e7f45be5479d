import { drawChart, PALETTE, type SeriesSpec } from './charts.js';
import { currenciesOf, type Reported } from './currency.js';
import { aovSeries, countSeries, frameOf, rateSeries, xsOf, type DailyFrame } from './daily.js';
import { $ } from './dom.js';
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

export function renderCharts(now: ChartPeriod, before: ChartPeriod | undefined, currency: string): void {
  const f = frameOf(now.records, now.from, now.to);
  const p = before && frameOf(before.records, before.from, before.to);
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
    label: 'Sends',
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
        label: 'Opens',
        color: PALETTE.green,
        values: countSeries(f, 'opens_unique'),
        summary: total(t.counts.opens_unique),
      },
      {
        label: 'Clicks',
        color: PALETTE.orange,
        values: countSeries(f, 'clicks_unique'),
        summary: total(t.counts.clicks_unique),
      },
      ...prev(
        { label: 'Sends', color: PALETTE.blue },
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
  // The list's currency on the left axis, the other on an axis of its own: neither flattened.
  const { main, other } = currenciesOf(currency);
  drawChart(
    $('chart-revenue'),
    xs,
    [
      {
        label: main,
        color: PALETTE.purple,
        values: revenueOf(f, main),
        summary: `${formatCents(revenueCents(t, main))} in all`,
      },
      {
        label: other,
        color: PALETTE.teal,
        values: revenueOf(f, other),
        summary: `${formatCents(revenueCents(t, other))} in all`,
        axis: 'right',
      },
      ...prev(
        { label: main, color: PALETTE.purple },
        (q) => revenueOf(q, main),
        (q) => `${formatCents(revenueCents(q, main))} in all`,
      ),
    ],
    'money',
    [main, other],
  );
  drawChart(
    $('chart-aov'),
    xs,
    [
      {
        label: `AOV ${main}`,
        color: PALETTE.purple,
        values: aovOf(f, main),
        summary: aovText(t, aovCents(t, main)),
      },
      {
        label: `AOV ${other}`,
        color: PALETTE.teal,
        values: aovOf(f, other),
        summary: aovText(t, aovCents(t, other)),
        axis: 'right',
      },
      ...prev(
        { label: `AOV ${main}`, color: PALETTE.purple },
        (q) => aovOf(q, main),
        (q) => aovText(q, aovCents(q, main)),
      ),
    ],
    'money',
    [main, other],
  );
}
