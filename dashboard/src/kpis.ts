import { changeText, ratioChange } from './change-text.js';
import { currenciesOf, currencyNote } from './currency.js';
import { $, el, show } from './dom.js';
import { format2, formatCents, formatInt } from './format.js';
import type { ResolvedPeriod } from './period.js';
import { state } from './state.js';
import { changeOf, type Change, type Totals } from './totals.js';

/** The period line and the KPI cards (totals, their change against the previous period, and its value). */
export function periodText(p: ResolvedPeriod, comparable: boolean): string {
  return comparable
    ? `${p.from} – ${p.to}, compared with ${p.previous.from} – ${p.previous.to} (${state.list!.timezone})`
    : `${p.from} – ${p.to} (${state.list!.timezone})`;
}

interface Card {
  key: string;
  label: string;
  value: string;
  /** The previous period's value as shown, beside the change. */
  previous: string | undefined;
  change: Change | undefined;
  /** A currency shown after the figure. */
  unit?: string;
  /** The other currency: shown smaller, after the list's own. */
  secondary?: boolean;
}

const rate = (r: number, sends: number) => (sends === 0 ? '—' : `${format2(r)} %`);
const aov = (cents: number, purchases: number) => (purchases === 0 ? '—' : formatCents(cents));

export function renderTotals(t: Totals, prev: Totals | undefined): void {
  const currency = state.list!.currency;
  const n = t.counts;
  const p = prev?.counts;
  const count = (key: string, label: string, field: keyof Totals['counts']): Card => ({
    key,
    label,
    value: formatInt(n[field]),
    previous: p && formatInt(p[field]),
    change: p && changeOf(n[field], p[field]),
  });
  const { main, other } = currenciesOf(currency);
  const money: Card[] = [main, other].flatMap((c) => {
    const cur = c === 'RON' ? t.revenueRonCents : t.revenueEurCents;
    const before = c === 'RON' ? prev?.revenueRonCents : prev?.revenueEurCents;
    const a = c === 'RON' ? t.aovRonCents : t.aovEurCents;
    const aBefore = c === 'RON' ? prev?.aovRonCents : prev?.aovEurCents;
    return [
      {
        key: `revenue-${c.toLowerCase()}`,
        label: c === main ? 'Revenue' : `Revenue in ${c}`,
        unit: c,
        secondary: c !== main,
        value: formatCents(cur),
        previous: before === undefined ? undefined : formatCents(before),
        change: before === undefined ? undefined : changeOf(cur, before),
      },
      {
        key: `aov-${c.toLowerCase()}`,
        label: c === main ? 'Average order value (revenue ÷ purchases)' : `AOV in ${c}`,
        unit: c,
        secondary: c !== main,
        value: aov(a, n.purchase_count),
        previous: aBefore === undefined ? undefined : aov(aBefore, p!.purchase_count),
        change:
          aBefore === undefined
            ? undefined
            : ratioChange(a, n.purchase_count, aBefore, p!.purchase_count, 'percent'),
      },
    ];
  });
  const cards: Card[] = [
    count('sends', 'Sends (total)', 'sends_total'),
    count('sends-unique', 'Sends (unique)', 'sends_unique'),
    {
      key: 'open-rate',
      label: 'Open rate (unique opens ÷ unique sends)',
      value: rate(t.openRate, n.sends_unique),
      previous: prev && rate(prev.openRate, p!.sends_unique),
      change: prev && ratioChange(t.openRate, n.sends_unique, prev.openRate, p!.sends_unique, 'points'),
    },
    {
      key: 'click-rate',
      label: 'Click rate (unique clicks ÷ unique sends)',
      value: rate(t.clickRate, n.sends_unique),
      previous: prev && rate(prev.clickRate, p!.sends_unique),
      change: prev && ratioChange(t.clickRate, n.sends_unique, prev.clickRate, p!.sends_unique, 'points'),
    },
    count('purchases', 'Purchases (total)', 'purchase_count'),
    // The list's currency with the main figures; the other after them, smaller.
    money[0]!,
    money[1]!,
    count('bounces', 'Bounces (total)', 'bounce_total'),
    count('unsubscribes', 'Unsubscribes (total)', 'unsub_total'),
    money[2]!,
    money[3]!,
  ];
  show($('currency-note'), currencyNote(currenciesOf(currency)));
  $('kpis').replaceChildren(
    ...cards.map((c) => {
      const card = el('div', undefined, { class: c.secondary ? 'kpi secondary' : 'kpi', 'data-kpi': c.key });
      const ch = changeText(c.change, c.key === 'bounces' || c.key === 'unsubscribes');
      const line = el('span', undefined, { class: 'kpi-compare' });
      line.append(el('span', ch.text, { class: `kpi-change ${ch.cls}` }));
      if (c.previous !== undefined)
        line.append(
          el('span', ` · before: ${c.previous}${c.unit && c.previous !== '—' ? ` ${c.unit}` : ''}`, {
            class: 'kpi-prev',
          }),
        );
      const figure = el('span', undefined, { class: 'kpi-figure' });
      figure.append(el('strong', c.value, { class: 'kpi-value' }));
      if (c.unit && c.value !== '—') figure.append(el('span', ` ${c.unit}`, { class: 'kpi-unit' }));
      card.append(el('span', c.label, { class: 'kpi-label' }), figure, line);
      return card;
    }),
  );
}
