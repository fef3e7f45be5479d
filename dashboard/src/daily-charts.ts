import { drawChart } from './charts.js';
import { $ } from './dom.js';
import type { StatsRecord } from './stats.js';

/** The three daily charts of the page: activity, revenue, AOV. */
export function renderCharts(records: StatsRecord[]): void {
  drawChart(
    $('chart-activity'),
    records,
    [
      { label: 'Sends', color: '#1a73e8', value: (r) => r.sends_unique },
      { label: 'Opens', color: '#188038', value: (r) => r.opens_unique },
      { label: 'Clicks', color: '#e37400', value: (r) => r.clicks_unique },
    ],
    'count',
  );
  drawChart(
    $('chart-revenue'),
    records,
    [
      { label: 'RON', color: '#a142f4', value: (r) => r.purchases_value_ron },
      { label: 'EUR', color: '#12b5cb', value: (r) => r.purchases_value_eur },
    ],
    'money',
  );
  drawChart(
    $('chart-aov'),
    records,
    [
      { label: 'AOV RON', color: '#a142f4', value: (r) => r.purchases_value_aov_ron },
      { label: 'AOV EUR', color: '#12b5cb', value: (r) => r.purchases_value_aov_eur },
    ],
    'money',
  );
}
