import { drawChart, PALETTE } from './charts.js';
import { aovSeries, countSeries, frameOf, rateSeries, xsOf } from './daily.js';
import { $ } from './dom.js';
import { format2, formatCents, formatInt } from './format.js';
import type { StatsRecord } from './stats.js';
import type { Totals } from './totals.js';

/** The daily charts of the page over the whole period asked for: activity, rates, revenue, AOV. */
export function renderCharts(records: StatsRecord[], from: string, to: string, t: Totals): void {
  const f = frameOf(records, from, to);
  const xs = xsOf(f);
  const total = (n: number) => `${formatInt(n)} in all`;
  const rate = (n: number) => (t.counts.sends_unique === 0 ? '—' : `${format2(n)} % overall`);
  const aov = (c: number) => (t.counts.purchase_count === 0 ? '—' : `${formatCents(c)} overall`);
  drawChart(
    $('chart-activity'),
    xs,
    [
      {
        label: 'Sends',
        color: PALETTE.blue,
        values: countSeries(f, 'sends_unique'),
        summary: total(t.counts.sends_unique),
      },
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
    ],
    'count',
  );
  drawChart(
    $('chart-rates'),
    xs,
    [
      { label: 'Open rate', color: PALETTE.green, values: rateSeries(f, 'opens'), summary: rate(t.openRate) },
      {
        label: 'Click rate',
        color: PALETTE.orange,
        values: rateSeries(f, 'clicks'),
        summary: rate(t.clickRate),
      },
    ],
    'percent',
  );
  drawChart(
    $('chart-revenue'),
    xs,
    [
      {
        label: 'RON',
        color: PALETTE.purple,
        values: countSeries(f, 'purchases_value_ron'),
        summary: `${formatCents(t.revenueRonCents)} in all`,
      },
      {
        label: 'EUR',
        color: PALETTE.teal,
        values: countSeries(f, 'purchases_value_eur'),
        summary: `${formatCents(t.revenueEurCents)} in all`,
      },
    ],
    'money',
  );
  drawChart(
    $('chart-aov'),
    xs,
    [
      { label: 'AOV RON', color: PALETTE.purple, values: aovSeries(f, 'ron'), summary: aov(t.aovRonCents) },
      { label: 'AOV EUR', color: PALETTE.teal, values: aovSeries(f, 'eur'), summary: aov(t.aovEurCents) },
    ],
    'money',
  );
}
