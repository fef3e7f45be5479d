import type { Alert, StatsTotals, WorkflowTotals } from '../stats/record.js';

/**
 * A report's e-mail (docs/dashboard.md "Reports"): the period's headline figures with their change
 * against the previous period, the top and bottom workflows by revenue per recipient, and "Needs a
 * look"; as HTML, plain text and a CSV attachment (semicolon-separated, decimal comma, as the
 * dashboard's export).
 */
export interface ReportInput {
  listName: string;
  currency: string;
  current: StatsTotals & { sends_total: number };
  previous: StatsTotals & { sends_total: number };
  workflows: WorkflowTotals[];
  alerts: Alert[];
}

export interface ReportMail {
  subject: string;
  text: string;
  html: string;
  csv: string;
}

/** 1234.5 → "1.234,50" (decimals given): decimal comma, '.' between thousands. */
const num = (v: number, decimals = 0) => {
  const [int = '0', frac] = v.toFixed(decimals).split('.');
  return int.replace(/\B(?=(\d{3})+(?!\d))/g, '.') + (frac ? `,${frac}` : '');
};

const change = (now: number, before: number) => {
  if (before === 0) return now === 0 ? '±0 %' : 'new';
  const pct = ((now - before) / before) * 100;
  return `${pct >= 0 ? '+' : '−'}${num(Math.abs(pct), 1)} %`;
};

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const csvCell = (s: string) => (/[;"\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

export function reportMail(r: ReportInput): ReportMail {
  const eur = r.currency === 'EUR';
  const money = (t: StatsTotals) => (eur ? t.purchases_value_eur : t.purchases_value_ron);
  const perRecipient = (t: StatsTotals) => (eur ? t.revenue_per_recipient_eur : t.revenue_per_recipient_ron);
  const { current: c, previous: p } = r;
  const headline: [string, string, string, string][] = [
    ['Recipients', num(c.recipients), num(p.recipients), change(c.recipients, p.recipients)],
    ['Sends', num(c.sends_total), num(p.sends_total), change(c.sends_total, p.sends_total)],
    [
      'Open rate (people)',
      `${num(c.opens_unique_percent, 2)} %`,
      `${num(p.opens_unique_percent, 2)} %`,
      change(c.opens_unique_percent, p.opens_unique_percent),
    ],
    [
      'Click rate (people)',
      `${num(c.clicks_unique_percent, 2)} %`,
      `${num(p.clicks_unique_percent, 2)} %`,
      change(c.clicks_unique_percent, p.clicks_unique_percent),
    ],
    [`Revenue (${r.currency})`, num(money(c), 2), num(money(p), 2), change(money(c), money(p))],
    [
      `Revenue per recipient (${r.currency})`,
      num(perRecipient(c), 2),
      num(perRecipient(p), 2),
      change(perRecipient(c), perRecipient(p)),
    ],
    [
      'Conversion rate',
      `${num(c.conversion_rate_percent, 2)} %`,
      `${num(p.conversion_rate_percent, 2)} %`,
      change(c.conversion_rate_percent, p.conversion_rate_percent),
    ],
    ['Orders', num(c.purchase_count), num(p.purchase_count), change(c.purchase_count, p.purchase_count)],
  ];
  const ranked = [...r.workflows]
    .filter((w) => w.recipients > 0)
    .map((w) => ({ w, value: (eur ? w.purchases_value_eur : w.purchases_value_ron) / w.recipients }))
    .sort((a, b) => b.value - a.value || Number(a.w.workflow_id) - Number(b.w.workflow_id));
  const top = ranked.slice(0, 3);
  const bottom = ranked.length > 3 ? ranked.slice(-3).reverse() : [];
  const name = (w: WorkflowTotals) => w.workflow_name ?? `Workflow ${w.workflow_id}`;
  const wfLine = (x: { w: WorkflowTotals; value: number }) =>
    `${name(x.w)}: ${num(x.value, 2)} ${r.currency} per recipient, ${num(x.w.recipients)} recipients, open rate ${num(x.w.opens_unique_percent, 2)} %`;
  const period = `${c.start_date} – ${c.stop_date}`;
  const subject = `${r.listName}: ${period}${r.alerts.length ? ` (${r.alerts.length} to look at)` : ''}`;

  const text = [
    `${r.listName} — ${period} (against ${p.start_date} – ${p.stop_date})`,
    '',
    ...headline.map(([label, now, before, ch]) => `${label}: ${now} (before: ${before}, ${ch})`),
    '',
    'Top workflows (revenue per recipient):',
    ...(top.length ? top.map((x) => `  ${wfLine(x)}`) : ['  none']),
    ...(bottom.length ? ['', 'Bottom workflows:', ...bottom.map((x) => `  ${wfLine(x)}`)] : []),
    '',
    'Needs a look:',
    ...(r.alerts.length ? r.alerts.map((a) => `  ${a.message}`) : ['  nothing']),
    '',
  ].join('\n');

  const row = (cells: string[], tag = 'td') =>
    `<tr>${cells.map((x) => `<${tag}>${escapeHtml(x)}</${tag}>`).join('')}</tr>`;
  const html = `<!doctype html><html><body style="font-family:sans-serif">
<h1>${escapeHtml(r.listName)}</h1>
<p>${escapeHtml(period)} (against ${escapeHtml(`${p.start_date} – ${p.stop_date}`)})</p>
<table cellpadding="4">${row(['', 'This period', 'Previous', 'Change'], 'th')}${headline.map((h) => row(h)).join('')}</table>
<h2>Top workflows</h2><ul>${top.map((x) => `<li>${escapeHtml(wfLine(x))}</li>`).join('') || '<li>none</li>'}</ul>
${bottom.length ? `<h2>Bottom workflows</h2><ul>${bottom.map((x) => `<li>${escapeHtml(wfLine(x))}</li>`).join('')}</ul>` : ''}
<h2>Needs a look</h2><ul>${r.alerts.map((a) => `<li>${escapeHtml(a.message)}</li>`).join('') || '<li>nothing</li>'}</ul>
</body></html>`;

  const csv = [
    ['measure', 'this period', 'previous period', 'change'].join(';'),
    ...headline.map((h) => h.map(csvCell).join(';')),
    '',
    [
      'workflow_id',
      'workflow',
      'recipients',
      'openers',
      'clickers',
      'buyers',
      'sends',
      `revenue ${r.currency}`,
    ].join(';'),
    ...r.workflows.map((w) =>
      [
        w.workflow_id,
        name(w),
        num(w.recipients),
        num(w.openers),
        num(w.clickers),
        num(w.buyers),
        num(w.sends_total),
        num(eur ? w.purchases_value_eur : w.purchases_value_ron, 2),
      ]
        .map(csvCell)
        .join(';'),
    ),
    '',
    'needs a look',
    ...r.alerts.map((a) => csvCell(a.message)),
  ].join('\r\n');
  return { subject, text, html, csv };
}
