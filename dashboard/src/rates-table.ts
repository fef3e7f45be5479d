import { currenciesOf } from './currency.js';
import { $, el } from './dom.js';
import { format2, formatCents } from './format.js';
import { ratesOf, type Rates } from './totals.js';
import { focusableIfCut, nameCell, type Breakdown } from './workflow-table.js';

/**
 * Workflows ranked by the rates a marketer compares them by (docs/dashboard.md "Figures"): open, click,
 * click-to-open, placed-order rate, revenue per recipient, bounce, unsubscribe and spam rate. One row per
 * workflow, ranked by the column picked (click or Enter on its header; biggest first, again to reverse),
 * the total row (the set as one query) under them. Every rate is a ratio of the period's sums of the
 * API's answer for that workflow; "—" where its denominator is 0.
 */
type RateKey = keyof Rates;

interface RateColumn {
  key: RateKey;
  header: string;
  /** What it divides, shown on hover. */
  title: string;
}

const COLUMNS: RateColumn[] = [
  { key: 'revenuePerRecipientCents', header: 'Revenue per recipient', title: 'revenue ÷ unique sends' },
  { key: 'orderRate', header: 'Placed-order rate %', title: 'purchases ÷ unique sends' },
  { key: 'openRate', header: 'Open rate %', title: 'unique opens ÷ unique sends' },
  { key: 'clickRate', header: 'Click rate %', title: 'unique clicks ÷ unique sends' },
  { key: 'clickToOpen', header: 'Click-to-open %', title: 'unique clicks ÷ unique opens' },
  { key: 'bounceRate', header: 'Bounce rate %', title: 'bounces ÷ sends (total)' },
  { key: 'unsubRate', header: 'Unsubscribe rate %', title: 'unsubscribes ÷ sends (total)' },
  { key: 'spamRate', header: 'Spam rate %', title: 'spam complaints ÷ sends (total)' },
];

/**
 * With people (automation.statsByWorkflow's rows) the rates are of people — openers, clickers, buyers ÷
 * recipients — and the rates of losses, which that answer does not count, are left out.
 */
const PEOPLE_TITLES: Partial<Record<RateKey, string>> = {
  revenuePerRecipientCents: 'revenue ÷ recipients',
  orderRate: 'buyers ÷ recipients',
  openRate: 'openers ÷ recipients',
  clickRate: 'clickers ÷ recipients',
  clickToOpen: 'clickers ÷ openers',
};
const columnsFor = (b: Breakdown): RateColumn[] =>
  b.grouped
    ? COLUMNS.filter((c) => PEOPLE_TITLES[c.key]).map((c) => ({
        ...c,
        header: c.key === 'orderRate' ? 'Conversion rate %' : c.header,
        title: PEOPLE_TITLES[c.key]!,
      }))
    : COLUMNS;

let sort: { key: RateKey; dir: 'ascending' | 'descending' } = {
  key: 'revenuePerRecipientCents',
  dir: 'descending',
};
let shown: { breakdown: Breakdown; currency: 'RON' | 'EUR' } | undefined;

/** The ranking as the page's address keeps it (`column:direction`), undefined for the default. */
export function rankText(): string | undefined {
  return sort.key === 'revenuePerRecipientCents' && sort.dir === 'descending'
    ? undefined
    : `${sort.key}:${sort.dir}`;
}

/** The ranking from the page's address; anything else leaves the default. */
export function setRankText(text: string | undefined): void {
  const [key, dir] = (text ?? '').split(':');
  const column = COLUMNS.find((c) => c.key === key);
  sort =
    column && (dir === 'ascending' || dir === 'descending')
      ? { key: column.key, dir }
      : { key: 'revenuePerRecipientCents', dir: 'descending' };
  draw();
}

const text = (c: RateColumn, r: Rates) => {
  const v = r[c.key];
  if (v === null) return '—';
  return c.key === 'revenuePerRecipientCents' ? formatCents(v) : format2(v);
};

function draw(): void {
  if (!shown) return;
  const { breakdown, currency } = shown;
  const rows = breakdown.rows.map((r) => ({
    key: String(r.workflow.workflow_id),
    id: r.workflow.workflow_id,
    name: r.workflow.name || 'Workflow',
    rates: ratesOf(r.totals, currency),
  }));
  rows.sort((a, b) => {
    const [x, y] = [a.rates[sort.key], b.rates[sort.key]];
    // Undefined rates ("—") last, whichever the direction.
    if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
    return sort.dir === 'ascending' ? x - y : y - x;
  });
  const head = el('tr');
  head.append(el('th', 'Rank. Workflow', { scope: 'col' }));
  const columns = columnsFor(breakdown);
  for (const c of columns) {
    const th = el('th', undefined, { scope: 'col', 'data-col': c.key, title: c.title });
    if (sort.key === c.key) th.setAttribute('aria-sort', sort.dir);
    const header = c.key === 'revenuePerRecipientCents' ? `${c.header} ${currency}` : c.header;
    const button = el('button', header, { type: 'button', class: 'sort' });
    button.addEventListener('click', () => {
      sort = {
        key: c.key,
        dir: sort.key === c.key ? (sort.dir === 'ascending' ? 'descending' : 'ascending') : 'descending',
      };
      draw();
      document.dispatchEvent(new Event('viewchange'));
      $('wf-rates').querySelector<HTMLButtonElement>(`th[data-col="${c.key}"] button`)?.focus();
    });
    th.append(button);
    head.append(th);
  }
  const body = el('tbody');
  rows.forEach((r, i) => {
    const tr = el('tr', undefined, { 'data-key': r.key });
    tr.append(
      nameCell(r.name, { id: r.id, rank: i + 1 }),
      ...columns.map((c) => el('td', text(c, r.rates), { 'data-col': c.key })),
    );
    body.append(tr);
  });
  const foot = el('tfoot');
  const total = el('tr', undefined, { 'data-key': 'total' });
  const all = ratesOf(breakdown.all.totals, currency);
  total.append(
    nameCell(breakdown.allLabel),
    ...columns.map((c) => el('td', text(c, all), { 'data-col': c.key })),
  );
  foot.append(total);
  const thead = el('thead');
  thead.append(head);
  $('wf-rates').replaceChildren(
    el('caption', 'Workflows ranked by their rates', { class: 'sr-only' }),
    thead,
    body,
    foot,
  );
  focusableIfCut($('wf-rates'));
}

export function renderRates(breakdown: Breakdown, listCurrency: string): void {
  shown = { breakdown, currency: currenciesOf(listCurrency).main };
  draw();
}

export function clearRates(): void {
  shown = undefined;
  $('wf-rates').replaceChildren();
}
