import { $, el } from './dom.js';
import { format1, format2, formatCents, formatInt } from './format.js';
import type { ResolvedPeriod } from './period.js';
import { state } from './state.js';
import { changeOf, pointsChange, type Change, type Totals } from './totals.js';

/** The period line and the KPI cards (totals and their change against the previous period). */
export function renderPeriodText(p: ResolvedPeriod, comparable: boolean): void {
  $('period-text').textContent = comparable
    ? `${p.from} – ${p.to}, compared with ${p.previous.from} – ${p.previous.to} (${state.list!.timezone})`
    : `${p.from} – ${p.to} (${state.list!.timezone})`;
}

/** Fewer is better for bounces and unsubscribes: their arrows keep their direction, their colours swap. */
function changeText(c: Change | undefined, fewerIsBetter = false): { text: string; cls: string } {
  const good = (up: boolean) => (up !== fewerIsBetter ? 'up' : 'down');
  if (!c) return { text: 'no comparison', cls: 'same' };
  switch (c.kind) {
    case 'same':
      return { text: 'no change', cls: 'same' };
    case 'new':
      return { text: 'new (none before)', cls: good(true) };
    case 'percent':
      return {
        text: `${c.value > 0 ? '▲ +' : '▼ −'}${format1(Math.abs(c.value))} %`,
        cls: good(c.value > 0),
      };
    case 'points':
      return {
        text: `${c.value > 0 ? '▲ +' : '▼ −'}${format2(Math.abs(c.value))} pp`,
        cls: good(c.value > 0),
      };
  }
}

export function renderTotals(t: Totals, prev: Totals | undefined): void {
  const currency = state.list!.currency;
  const money: [string, number, number | undefined][] = [
    ['Revenue RON', t.revenueRonCents, prev?.revenueRonCents],
    ['Revenue EUR', t.revenueEurCents, prev?.revenueEurCents],
    ['AOV RON', t.aovRonCents, prev?.aovRonCents],
    ['AOV EUR', t.aovEurCents, prev?.aovEurCents],
  ];
  // The list's display currency first.
  if (currency === 'EUR') money.sort((a, b) => Number(b[0].endsWith('EUR')) - Number(a[0].endsWith('EUR')));
  const cards: { key: string; label: string; value: string; change: Change | undefined }[] = [
    {
      key: 'sends',
      label: 'Sends',
      value: formatInt(t.counts.sends_total),
      change: prev && changeOf(t.counts.sends_total, prev.counts.sends_total),
    },
    {
      key: 'open-rate',
      label: 'Unique open rate',
      value: `${format2(t.openRate)} %`,
      change: prev && pointsChange(t.openRate, prev.openRate),
    },
    {
      key: 'click-rate',
      label: 'Unique click rate',
      value: `${format2(t.clickRate)} %`,
      change: prev && pointsChange(t.clickRate, prev.clickRate),
    },
    {
      key: 'purchases',
      label: 'Purchases',
      value: formatInt(t.counts.purchase_count),
      change: prev && changeOf(t.counts.purchase_count, prev.counts.purchase_count),
    },
    ...money.map(([label, cents, p]) => ({
      key: label.toLowerCase().replace(' ', '-'),
      label,
      value: formatCents(cents),
      change: p === undefined ? undefined : changeOf(cents, p),
    })),
    {
      key: 'bounces',
      label: 'Bounces',
      value: formatInt(t.counts.bounce_total),
      change: prev && changeOf(t.counts.bounce_total, prev.counts.bounce_total),
    },
    {
      key: 'unsubscribes',
      label: 'Unsubscribes',
      value: formatInt(t.counts.unsub_total),
      change: prev && changeOf(t.counts.unsub_total, prev.counts.unsub_total),
    },
  ];
  $('kpis').replaceChildren(
    ...cards.map((c) => {
      const card = el('div', undefined, { class: 'kpi', 'data-kpi': c.key });
      const ch = changeText(c.change, c.key === 'bounces' || c.key === 'unsubscribes');
      card.append(
        el('span', c.label, { class: 'kpi-label' }),
        el('strong', c.value, { class: 'kpi-value' }),
        el('span', ch.text, { class: `kpi-change ${ch.cls}` }),
      );
      return card;
    }),
  );
}
