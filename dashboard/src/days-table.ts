import { COLUMN_HEADERS } from './columns.js';
import { $, el } from './dom.js';
import { format2, formatInt } from './format.js';
import { DAY_COLUMNS, type StatsRecord } from './stats.js';

/** The table of days: one row per day the API answered, its values as the API gave them. */
function dayCell(r: StatsRecord, c: (typeof DAY_COLUMNS)[number]): string {
  switch (c) {
    case 'purchases_value_ron':
      return r.formatted_revenue_ron;
    case 'purchases_value_eur':
      return r.formatted_revenue_eur;
    // An average of nothing is undefined: "—", not the API's 0.
    case 'purchases_value_aov_ron':
      return r.purchase_count === 0 ? '—' : r.formatted_value_aov_ron;
    case 'purchases_value_aov_eur':
      return r.purchase_count === 0 ? '—' : r.formatted_value_aov_eur;
    case 'opens_unique_percent':
    case 'clicks_unique_percent':
      return r.sends_unique === 0 ? '—' : format2(r[c]);
    default:
      return formatInt(r[c]);
  }
}

export function renderDays(records: StatsRecord[]): void {
  const head = el('thead');
  const tr = el('tr');
  tr.append(
    ...['Date', ...DAY_COLUMNS.map((c) => COLUMN_HEADERS[c])].map((h) => el('th', h, { scope: 'col' })),
  );
  head.append(tr);
  const body = el('tbody');
  for (const r of records) {
    const row = el('tr', undefined, { 'data-key': r.date });
    row.append(el('th', r.date, { scope: 'row' }), ...DAY_COLUMNS.map((c) => el('td', dayCell(r, c))));
    body.append(row);
  }
  $('days').replaceChildren(
    el('caption', 'Daily figures (days with activity)', { class: 'sr-only' }),
    head,
    body,
  );
}
