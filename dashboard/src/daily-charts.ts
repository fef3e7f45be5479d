import { drawChart, PALETTE } from './charts.js';
import { currenciesOf } from './currency.js';
import { aovSeries, countSeries, frameOf, rateSeries, xsOf } from './daily.js';
import { $ } from './dom.js';
import { format2, formatCents, formatInt } from './format.js';
import type { StatsRecord } from './stats.js';
import type { Totals } from './totals.js';

/** The daily charts of the page over the whole period asked for: activity, rates, revenue, AOV. */
export function renderCharts(
  records: StatsRecord[],
  from: string,
  to: string,
  t: Totals,
  currency: string,
): void {
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
  // The list's currency on the left axis, the other on an axis of its own: neither flattened.
  const { main, other } = currenciesOf(currency);
  const money = (c: 'RON' | 'EUR') => ({
    revenue: countSeries(f, c === 'RON' ? 'purchases_value_ron' : 'purchases_value_eur'),
    revenueCents: c === 'RON' ? t.revenueRonCents : t.revenueEurCents,
    aov: aovSeries(f, c === 'RON' ? 'ron' : 'eur'),
    aovCents: c === 'RON' ? t.aovRonCents : t.aovEurCents,
    color: c === main ? PALETTE.purple : PALETTE.teal,
  });
  const [m, o] = [money(main), money(other)];
  drawChart(
    $('chart-revenue'),
    xs,
    [
      { label: main, color: m.color, values: m.revenue, summary: `${formatCents(m.revenueCents)} in all` },
      {
        label: other,
        color: o.color,
        values: o.revenue,
        summary: `${formatCents(o.revenueCents)} in all`,
        axis: 'right',
      },
    ],
    'money',
    [main, other],
  );
  drawChart(
    $('chart-aov'),
    xs,
    [
      { label: `AOV ${main}`, color: m.color, values: m.aov, summary: aov(m.aovCents) },
      { label: `AOV ${other}`, color: o.color, values: o.aov, summary: aov(o.aovCents), axis: 'right' },
    ],
    'money',
    [main, other],
  );
}
