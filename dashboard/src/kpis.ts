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
  /** Short: a phone shows two cards side by side. */
  label: string;
  /** What it counts and how, shown on hover and focus (the help under the cards says it too). */
  help: string;
  value: string;
  /** The previous period's value as shown, beside the change. */
  previous: string | undefined;
  change: Change | undefined;
  /** A currency shown after the figure. */
  unit?: string;
  /** The other currency: shown smaller, after the list's own. */
  secondary?: boolean;
  /** Fewer is better (bounces, unsubscribes): the colours of its change swap. */
  fewerIsBetter?: boolean;
}

const rate = (r: number, base: number) => (base === 0 ? '—' : `${format2(r)} %`);
const perBase = (cents: number, base: number) => (base === 0 ? '—' : formatCents(cents));

/**
 * The cards: the figures a marketer ranks by first — revenue, revenue per recipient, conversion rate,
 * and the people reached (recipients, openers, clickers, buyers: each counted once over the period) —
 * then sends, purchases, AOV, bounces, unsubscribes, and the other currency. Without the people (a
 * service that does not answer them) the rates are of subscriber-days, as the API's days define them.
 */
export function renderTotals(t: Totals, prev: Totals | undefined): void {
  const currency = state.list!.currency;
  const n = t.counts;
  const p = prev?.counts;
  const count = (
    key: string,
    label: string,
    help: string,
    field: keyof Totals['counts'],
    fewer = false,
  ): Card => ({
    key,
    label,
    help,
    value: formatInt(n[field]),
    previous: p && formatInt(p[field]),
    change: p && changeOf(n[field], p[field]),
    fewerIsBetter: fewer,
  });
  const { main, other } = currenciesOf(currency);
  const people = t.people;
  const before = prev?.people;
  const moneyCards = (c: 'RON' | 'EUR'): Card[] => {
    const ron = c === 'RON';
    const cur = ron ? t.revenueRonCents : t.revenueEurCents;
    const was = ron ? prev?.revenueRonCents : prev?.revenueEurCents;
    const a = ron ? t.aovRonCents : t.aovEurCents;
    const aWas = ron ? prev?.aovRonCents : prev?.aovEurCents;
    const secondary = c !== main;
    const cards: Card[] = [
      {
        key: `revenue-${c.toLowerCase()}`,
        label: secondary ? `Revenue ${c}` : 'Revenue',
        help: 'The purchases’ value over the period, exact, rounded once to the cent.',
        unit: c,
        secondary,
        value: formatCents(cur),
        previous: was === undefined ? undefined : formatCents(was),
        change: was === undefined ? undefined : changeOf(cur, was),
      },
    ];
    if (people) {
      const rpr = ron ? people.revenuePerRecipientRonCents : people.revenuePerRecipientEurCents;
      const rprWas =
        before && (ron ? before.revenuePerRecipientRonCents : before.revenuePerRecipientEurCents);
      cards.push({
        key: `rpr-${c.toLowerCase()}`,
        label: secondary ? `Per recipient ${c}` : 'Per recipient',
        help: 'Revenue per recipient: revenue ÷ recipients (people sent to in the period).',
        unit: c,
        secondary,
        value: perBase(rpr, people.recipients),
        previous: before && rprWas !== undefined ? perBase(rprWas, before.recipients) : undefined,
        change:
          before && rprWas !== undefined
            ? ratioChange(rpr, people.recipients, rprWas, before.recipients, 'percent')
            : undefined,
      });
    }
    cards.push({
      key: `aov-${c.toLowerCase()}`,
      label: secondary ? `AOV ${c}` : 'AOV',
      help: 'Average order value: revenue ÷ purchases.',
      unit: c,
      secondary,
      value: perBase(a, n.purchase_count),
      previous: aWas === undefined ? undefined : perBase(aWas, p!.purchase_count),
      change:
        aWas === undefined ? undefined : ratioChange(a, n.purchase_count, aWas, p!.purchase_count, 'percent'),
    });
    return cards;
  };
  const [mainRevenue, ...mainRest] = moneyCards(main);
  const headline: Card[] = people
    ? [
        mainRevenue!,
        mainRest[0]!,
        {
          key: 'conversion',
          label: 'Conversion',
          help: 'Conversion rate: people who bought ÷ recipients, as the API answers it.',
          value: rate(people.conversionRate, people.recipients),
          previous: before && rate(before.conversionRate, before.recipients),
          change:
            before &&
            ratioChange(
              people.conversionRate,
              people.recipients,
              before.conversionRate,
              before.recipients,
              'points',
            ),
        },
        ...(
          [
            [
              'recipients',
              'Recipients',
              'People sent to in the period, each once however many emails they got.',
            ],
            ['openers', 'Openers', 'People who opened an email in the period, each once.'],
            ['clickers', 'Clickers', 'People who clicked in the period, each once.'],
            ['buyers', 'Buyers', 'People who bought in the period, each once.'],
          ] as const
        ).map(([key, label, help]): Card => ({
          key,
          label,
          help,
          value: formatInt(people[key]),
          previous: before && formatInt(before[key]),
          change: before && changeOf(people[key], before[key]),
        })),
        {
          key: 'open-rate',
          label: 'Open rate',
          help: 'Openers ÷ recipients (people, over the period).',
          value: rate(people.openRate, people.recipients),
          previous: before && rate(before.openRate, before.recipients),
          change:
            before &&
            ratioChange(people.openRate, people.recipients, before.openRate, before.recipients, 'points'),
        },
        {
          key: 'click-rate',
          label: 'Click rate',
          help: 'Clickers ÷ recipients (people, over the period).',
          value: rate(people.clickRate, people.recipients),
          previous: before && rate(before.clickRate, before.recipients),
          change:
            before &&
            ratioChange(people.clickRate, people.recipients, before.clickRate, before.recipients, 'points'),
        },
        mainRest[1]!,
      ]
    : [
        mainRevenue!,
        {
          key: 'open-rate',
          label: 'Open rate',
          help: 'Σ unique opens ÷ Σ unique sends of the days (subscriber-days).',
          value: rate(t.openRate, n.sends_unique),
          previous: prev && rate(prev.openRate, p!.sends_unique),
          change: prev && ratioChange(t.openRate, n.sends_unique, prev.openRate, p!.sends_unique, 'points'),
        },
        {
          key: 'click-rate',
          label: 'Click rate',
          help: 'Σ unique clicks ÷ Σ unique sends of the days (subscriber-days).',
          value: rate(t.clickRate, n.sends_unique),
          previous: prev && rate(prev.clickRate, p!.sends_unique),
          change: prev && ratioChange(t.clickRate, n.sends_unique, prev.clickRate, p!.sends_unique, 'points'),
        },
        count(
          'sends-unique',
          'Subscriber-days',
          'Sends (unique) summed over the days: a subscriber sent to on three days counts three times.',
          'sends_unique',
        ),
        ...mainRest,
      ];
  const cards: Card[] = [
    ...headline,
    count('sends', 'Sends', 'Sends (total): every email sent.', 'sends_total'),
    count('purchases', 'Purchases', 'Purchases (total): every order.', 'purchase_count'),
    count('bounces', 'Bounces', 'Bounces (total).', 'bounce_total', true),
    count('unsubscribes', 'Unsubscribes', 'Unsubscribes (total).', 'unsub_total', true),
    ...moneyCards(other),
  ];
  show($('currency-note'), currencyNote(currenciesOf(currency)));
  $('kpis').replaceChildren(
    ...cards.map((c) => {
      const card = el('div', undefined, {
        class: c.secondary ? 'kpi secondary' : 'kpi',
        'data-kpi': c.key,
        title: c.help,
      });
      const ch = changeText(c.change, c.fewerIsBetter);
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
