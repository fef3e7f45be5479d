import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildDashboard,
  launchBrowser,
  loaded,
  shift,
  signInAs,
  todayIn,
  type Browser,
} from '../support/browser.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * Money exact to the cent and the per-workflow CSV as the table on screen.
 * Every day of ten, workflow 1 takes 1.0050 RON / 0.2010 EUR and workflow 2 takes 2.0000 RON /
 * 0.4000 EUR: the API rounds each day (3.0050 → 3,01; 0.6010 → 0,60), so adding its days gives 30,10 RON
 * and 6,00 EUR where the period holds 30,05 RON and 6,01 EUR. The previous period holds five days of
 * workflow 1 (5 × 1.0050 = 5,025 → 5,03; the days' sum would be 5,05). Expected figures are computed here
 * from the amounts written, in integer units of 10^-4.
 */
const USER = 6101;
const KEY = 'money-key-0123456789';
const LIST = 61;
const TZ = 'Europe/Bucharest';
const DAYS = 10;
const PREVIOUS_DAYS = 5;
const W1 = { ron: 10_050, eur: 2_010 };
const W2 = { ron: 20_000, eur: 4_000 };

/** A template whose fields a `{}` leaves blank: "Order #, placed on ." */
const TEMPLATE =
  '<p>Order #{{order.id}}, placed on {{order.placed_at}}.</p>' +
  '{{#each order.items}}<p>{{name}} × {{quantity}}</p>{{/each}}' +
  '{{#if order.coupon}}<p>Coupon {{order.coupon}}</p>{{/if}}';

let service: TestService;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

/** Units of 10^-4 → cents, half away from zero (non-negative). */
const centsOf = (units: number) => Math.floor((units + 50) / 100);
const shown = (cents: number) =>
  `${String(Math.trunc(cents / 100)).replace(/\B(?=(\d{3})+(?!\d))/g, '.')},${String(cents % 100).padStart(2, '0')}`;
const decimal = (u: number) => `${Math.trunc(u / 10_000)}.${String(u % 10_000).padStart(4, '0')}`;

const kpi = (key: string) => page.locator(`[data-kpi="${key}"] .kpi-value`).innerText();
const kpiBefore = (key: string) => page.locator(`[data-kpi="${key}"] .kpi-prev`).innerText();
const cell = (row: string, col: string) =>
  page.locator(`#wf tr[data-key="${row}"] td[data-col="${col}"] .v`).innerText();
const cellBefore = (row: string, col: string) =>
  page.locator(`#wf tr[data-key="${row}"] td[data-col="${col}"] .d`).getAttribute('title');

beforeAll(async () => {
  buildDashboard();
  service = await startTestService();
  const today = todayIn(TZ);
  const at = (date: string) => Date.parse(`${date}T10:00:00Z`);
  const purchase = (id: string, workflow: number, date: string, w: { ron: number; eur: number }) => ({
    type: 'purchase',
    event_id: id,
    list_id: LIST,
    workflow_id: workflow,
    subscriber_id: workflow * 1000 + Number(id.replace(/\D/g, '')),
    timestamp: at(date),
    order_id: `o-${id}`,
    value_ron: decimal(w.ron),
    value_eur: decimal(w.eur),
  });
  const res = await service.ingest([
    ...tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST, timezone: TZ, currency: 'RON' }] }),
    { type: 'workflow', workflow_id: 1, list_id: LIST, name: 'Alpha' },
    { type: 'workflow', workflow_id: 2, list_id: LIST, name: 'Beta' },
    { type: 'smtp_account', account_id: 'acc-money', list_id: LIST, active: true, is_default: true },
    {
      type: 'template',
      template_id: 'order-note',
      account_id: 'acc-money',
      content: TEMPLATE,
      content_type: 'html',
      engine: 'handlebars',
      props: { subject: 'Order {{order.id}} for {{customer.first_name}}' },
    },
    ...Array.from({ length: DAYS }, (_, i) => [
      purchase(`a${i}`, 1, shift(today, -(i + 1)), W1),
      purchase(`b${i}`, 2, shift(today, -(i + 1)), W2),
    ]).flat(),
    // The previous period of "the last 30 days": 30 to 59 days ago.
    ...Array.from({ length: PREVIOUS_DAYS }, (_, i) => purchase(`p${i}`, 1, shift(today, -(31 + i)), W1)),
  ]);
  expect(res.status).toBe(200);
  expect(res.body.rejected).toEqual([]);
  browser = await launchBrowser({ width: 1440, height: 900 });
  page = browser.page;
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  // These figures are compared with the API's `days=N` (today included): the view with today
  // (docs/dashboard.md "Choosing what to show"; periods end yesterday unless today is asked for).
  await page.goto(`${service.url}/dashboard/#today=1`);
  await signInAs(page, USER, KEY);
  await loaded(page);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

describe('money exact to the cent', () => {
  const ron = DAYS * (W1.ron + W2.ron);
  const eur = DAYS * (W1.eur + W2.eur);
  const purchases = 2 * DAYS;

  it('the data makes the point: the API’s days add up to other cents', async () => {
    const res = await fetch(`${service.url}/api/1.2/rest/${USER}/${KEY}/automation.stats.json`, {
      method: 'POST',
      body: JSON.stringify({ list_id: LIST, days: 30 }),
      headers: { 'content-type': 'application/json' },
    });
    const days: any[] = await res.json();
    const sum = days.reduce((s, r) => s + Math.round(r.purchases_value_ron * 100), 0);
    expect(days).toHaveLength(DAYS);
    expect(sum).not.toBe(centsOf(ron));
  });

  it('the cards: revenue and AOV of the period, and of the previous one, rounded once', async () => {
    expect(await kpi('revenue-ron')).toBe(shown(centsOf(ron)));
    expect(await kpi('revenue-eur')).toBe(shown(centsOf(eur)));
    expect(await kpi('aov-ron')).toBe(shown(centsOf(ron / purchases)));
    expect(await kpi('aov-eur')).toBe(shown(centsOf(eur / purchases)));
    expect(await kpiBefore('revenue-ron')).toContain(`before: ${shown(centsOf(PREVIOUS_DAYS * W1.ron))} RON`);
    expect(await kpiBefore('revenue-eur')).toContain(`before: ${shown(centsOf(PREVIOUS_DAYS * W1.eur))} EUR`);
    // The note under the cards says how money is summed, as it now is.
    const hint = (await page.locator('#totals-hint').textContent()) ?? '';
    expect(hint).toContain('Money is the period’s exact sum, rounded once');
    expect(hint).not.toContain('daily amounts');
  });

  it('the per-workflow rows and the total row, and their previous period', async () => {
    expect(await cell('1', 'purchases_value_ron')).toBe(shown(centsOf(DAYS * W1.ron)));
    expect(await cell('1', 'purchases_value_eur')).toBe(shown(centsOf(DAYS * W1.eur)));
    expect(await cell('2', 'purchases_value_ron')).toBe(shown(centsOf(DAYS * W2.ron)));
    expect(await cell('total', 'purchases_value_ron')).toBe(shown(centsOf(ron)));
    expect(await cell('total', 'purchases_value_eur')).toBe(shown(centsOf(eur)));
    expect(await cellBefore('1', 'purchases_value_ron')).toBe(
      `before: ${shown(centsOf(PREVIOUS_DAYS * W1.ron))}`,
    );
    expect(await cellBefore('total', 'purchases_value_eur')).toBe(
      `before: ${shown(centsOf(PREVIOUS_DAYS * W1.eur))}`,
    );
  });
});

describe('the per-workflow CSV is the table on screen', () => {
  const headings = () =>
    page.locator('#wf thead th').evaluateAll((ths) => ths.map((th) => (th as HTMLElement).innerText.trim()));
  const rowKeys = () =>
    page
      .locator('#wf tbody tr, #wf tfoot tr')
      .evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-key')));

  /** One RFC 4180 line → its fields (quoted fields may hold the separator). */
  const fields = (line: string, sep: string) =>
    [...line.matchAll(new RegExp(`("(?:[^"]|"")*"|[^${sep}]*)(?:${sep}|$)`, 'g'))]
      .slice(0, -1)
      .map((m) => (m[1]!.startsWith('"') ? m[1]!.slice(1, -1).replace(/""/g, '"') : m[1]!));

  async function download(button: string): Promise<string> {
    const [file] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
    return readFileSync((await file.path())!, 'utf8').replace(/^\uFEFF/, '');
  }

  it('same columns, same order, same headings; one line per row shown, the total row included', async () => {
    const screen = await headings();
    // Workflow, then automation.statsByWorkflow's columns: people, their rates, counts, money.
    expect(screen.length).toBe(13);
    const csv = (await download('#export-workflows')).trimEnd().split('\r\n');
    expect(fields(csv[0]!, ',')).toEqual(screen);
    expect(csv.length - 1).toBe((await rowKeys()).length);
    const revenue = screen.indexOf('Revenue RON');
    const alpha = fields(
      csv.find((l) => l.startsWith('Alpha'))!,
      ',',
    );
    expect(alpha[0]).toBe('Alpha (#1)');
    expect(Number(alpha[revenue])).toBe(centsOf(DAYS * W1.ron) / 100);
    const total = fields(csv.at(-1)!, ',');
    expect(total[0]).toBe(await page.locator('#wf tr[data-key="total"] th').innerText());
    expect(Number(total[revenue])).toBe(centsOf(DAYS * (W1.ron + W2.ron)) / 100);
  });

  it('the spreadsheet CSV (ro) has the same headings too', async () => {
    const screen = await headings();
    const csv = (await download('#export-workflows-ro')).trimEnd().split('\r\n');
    expect(fields(csv[0]!, ';')).toEqual(screen);
    expect(csv.length - 1).toBe((await rowKeys()).length);
  });
});

describe('template preview', () => {
  async function renderWith(params: string): Promise<void> {
    await page.selectOption('#tpl-account', 'acc-money');
    await page.selectOption('#tpl-template', 'order-note');
    await page.fill('#tpl-params', params);
    await page.click('#tpl-render');
    await page.locator('#tpl-render:not([disabled])').waitFor();
  }

  it('bad JSON in the params box: says where (line and column) and what, before asking the API', async () => {
    await renderWith('{\n  "order": {\n    "id": 5,\n  }\n}');
    const error = page.locator('#tpl-error');
    await error.waitFor();
    expect(await error.innerText()).toMatch(/^The params are not valid JSON: line 4, column 3: \S/);
    expect(await page.locator('#tpl-result').isHidden()).toBe(true);
  });

  it('`{}` renders, with a warning naming every field the template reads that the params do not give', async () => {
    await renderWith('{}');
    await page.locator('#tpl-result').waitFor();
    const frame = page.frameLocator('#tpl-frame');
    expect(await frame.locator('p').first().innerText()).toBe('Order #, placed on .');
    const warning = page.locator('#tpl-warning');
    await warning.waitFor();
    expect(await warning.innerText()).toBe(
      'The template uses 5 fields that the params do not give, shown empty: order.id, order.placed_at, ' +
        'order.items, order.coupon, customer.first_name.',
    );
    expect(await page.locator('#tpl-error').isHidden()).toBe(true);
  });

  it('params that give a field (even an empty list) take it off the warning; all given: no warning', async () => {
    await renderWith('{"order": {"id": 7, "items": []}}');
    await page.locator('#tpl-result').waitFor();
    await expect
      .poll(() => page.locator('#tpl-warning').innerText())
      .toBe(
        'The template uses 3 fields that the params do not give, shown empty: order.placed_at, order.coupon, ' +
          'customer.first_name.',
      );
    await renderWith(
      JSON.stringify({
        order: { id: 7, placed_at: 'today', items: [], coupon: 'C' },
        customer: { first_name: 'Ana' },
      }),
    );
    expect(await page.frameLocator('#tpl-frame').locator('p').first().innerText()).toBe(
      'Order #7, placed on today.',
    );
    expect(await page.locator('#tpl-warning').isHidden()).toBe(true);
  });

  it('transactional.templateVariables answers as documented: the fields, and its errors', async () => {
    const call = async (params: object) =>
      (
        await fetch(`${service.url}/api/1.2/rest/${USER}/${KEY}/transactional.templateVariables.json`, {
          method: 'POST',
          body: JSON.stringify(params),
          headers: { 'content-type': 'application/json' },
        })
      ).json();
    expect(await call({ list_id: LIST, template_id: 'order-note' })).toEqual({
      variables: ['order.id', 'order.placed_at', 'order.items', 'order.coupon', 'customer.first_name'],
    });
    expect(await call({ list_id: LIST })).toEqual({
      err: true,
      code: 407,
      message: 'Missing required param template_id',
    });
    expect((await call({ list_id: LIST, template_id: 'nope' })).code).toBe(17006);
    expect((await call({ list_id: 999, template_id: 'order-note' })).code).toBe(101);
  });
});

it('threw no script error', () => {
  expect(pageErrors).toEqual([]);
});
