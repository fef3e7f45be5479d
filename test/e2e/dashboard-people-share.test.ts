import type { Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, demoRecords } from '../../ingest/demo-seed.js';
import {
  buildDashboard,
  launchBrowser,
  loaded,
  shift,
  signInAs,
  todayIn,
  type Browser,
} from '../support/browser.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * The dashboard's figures of people and its share links, at 1440×900 and 390×844, on the demo's data:
 * recipients, openers, clickers and buyers (distinct people over the period) as the headline with
 * revenue per recipient and conversion rate, each equal to automation.statsTotals' answer for the same
 * dates; the service's alerts under "Needs a look" (the demo's spam complaints are over 0,1 %); a share link
 * made from the page opens that dashboard in that view without a key, and reaches nothing else.
 */
const TZ = 'Europe/Bucharest';
const VIEWPORTS = [
  { name: 'desktop', width: 1440, height: 900 },
  { name: 'phone', width: 390, height: 844 },
] as const;

let service: TestService;
let today: string;

async function api(operation: string, params: object): Promise<any> {
  const res = await fetch(`${service.url}/api/1.2/rest/${DEMO.userId}/${DEMO.apiKey}/${operation}.json`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(params),
  });
  return res.json();
}

const int = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, '.');
const cents = (c: number) => `${int(Math.trunc(c / 100))},${String(c % 100).padStart(2, '0')}`;
const pct = (part: number, whole: number) => `${cents(Math.round((part * 10_000) / whole))} %`;

beforeAll(async () => {
  buildDashboard();
  service = await startTestService();
  expect((await service.pipeline.ingest(demoRecords())).rejected).toEqual([]);
  today = todayIn(TZ);
}, 300_000);

afterAll(async () => {
  await service?.stop();
});

describe.each(VIEWPORTS)('at $width×$height ($name)', (vp) => {
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const kpi = (key: string) => page.locator(`[data-kpi="${key}"] .kpi-value`).innerText();
  const kpiBefore = (key: string) => page.locator(`[data-kpi="${key}"] .kpi-prev`).innerText();
  const yesterday = () => shift(today, -1);
  const period = () => ({ list_id: 1, start_date: shift(yesterday(), -29), stop_date: yesterday() });
  const previous = () => ({
    list_id: 1,
    start_date: shift(yesterday(), -59),
    stop_date: shift(yesterday(), -30),
  });

  beforeAll(async () => {
    browser = await launchBrowser({ width: vp.width, height: vp.height });
    page = browser.page;
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    await page.goto(`${service.url}/dashboard/`);
    await signInAs(page, DEMO.userId, DEMO.apiKey);
    await loaded(page);
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('the headline counts people: recipients, openers, clickers, buyers, as the API answers them', async () => {
    const t = await api('automation.statsTotals', period());
    const before = await api('automation.statsTotals', previous());
    expect(typeof t.recipients).toBe('number');
    for (const key of ['recipients', 'openers', 'clickers', 'buyers']) {
      expect(await kpi(key), key).toBe(int(t[key]));
      expect(await kpiBefore(key), key).toContain(`before: ${int(before[key])}`);
    }
    expect(await page.locator('[data-kpi="recipients"] .kpi-label').innerText()).toBe('Recipients');
    expect(await kpi('open-rate')).toBe(pct(t.openers, t.recipients));
    expect(await kpi('click-rate')).toBe(pct(t.clickers, t.recipients));
    // Fewer people than subscriber-days: the days' unique sends add up to more.
    const days: any[] = await api('automation.stats', period());
    expect(t.recipients).toBeLessThan(days.reduce((a, r) => a + r.sends_unique, 0));
  });

  it('revenue per recipient and conversion rate are cards with their change; formulas in the help', async () => {
    const t = await api('automation.statsTotals', period());
    const before = await api('automation.statsTotals', previous());
    expect(await kpi('rpr-ron')).toBe(cents(Math.round(t.revenue_per_recipient_ron * 100)));
    expect(await kpiBefore('rpr-ron')).toContain(
      `before: ${cents(Math.round(before.revenue_per_recipient_ron * 100))}`,
    );
    expect(await kpi('conversion')).toBe(`${cents(Math.round(t.conversion_rate_percent * 100))} %`);
    expect(await page.locator('[data-kpi="conversion"] .kpi-change').innerText()).toMatch(/pp|no change/);
    for (const key of ['rpr-ron', 'conversion', 'open-rate']) {
      expect(await page.locator(`[data-kpi="${key}"] .kpi-label`).innerText()).not.toContain('÷');
      expect(await page.locator(`[data-kpi="${key}"]`).getAttribute('title')).toContain('÷');
    }
    // The headline comes first: revenue, revenue per recipient, conversion.
    const order = await page
      .locator('#kpis .kpi')
      .evaluateAll((ks) => ks.map((k) => (k as HTMLElement).dataset.kpi));
    expect(order.slice(0, 3)).toEqual(['revenue-ron', 'rpr-ron', 'conversion']);
  });

  it('the per-workflow table comes from one grouped request per period, not calls per workflow', async () => {
    const ops: string[] = [];
    const count = (r: Request) => {
      const m = /\/([\w.]+)\.json$/.exec(new URL(r.url()).pathname);
      if (m) ops.push(`${m[1]} ${r.postData() ?? ''}`);
    };
    page.on('request', count);
    try {
      await page.reload();
      await loaded(page);
    } finally {
      page.off('request', count);
    }
    expect(ops.filter((o) => o.startsWith('automation.statsByWorkflow ')).length).toBe(2);
    expect(ops.filter((o) => o.includes('"workflow_ids":[')).length).toBe(0);
    const t: any[] = await api('automation.statsByWorkflow', period());
    for (const row of t.filter((r) => r.workflow_id !== '99')) {
      const cell = (col: string) =>
        page.locator(`#wf tr[data-key="${row.workflow_id}"] td[data-col="${col}"] .v`).innerText();
      expect(await cell('recipients')).toBe(int(row.recipients));
      expect(await cell('sends_total')).toBe(int(row.sends_total));
    }
  });

  it('the service’s alerts are under "Needs a look", as the API answers them (the demo’s spam complaints)', async () => {
    const t = await api('automation.statsTotals', period());
    // The demo's spam complaints are 0,50 % of its sends (total), over the 0,10 % default. Its bounces
    // (88 of 4.408 sends (total) on the day this was written: 1,996 %) are not above the 2 % default.
    const spam = t.alerts.find((a: any) => a.kind === 'spam');
    expect(spam, JSON.stringify(t.alerts)).toBeDefined();
    expect(await page.locator('#wf-health').isVisible()).toBe(true);
    expect(await page.locator('#wf-health li[data-alert="spam"]').innerText()).toBe(spam.message);
    const shown = await page
      .locator('#wf-health li[data-alert]')
      .evaluateAll((lis) =>
        lis.map((li) => [(li as HTMLElement).dataset.alert, (li as HTMLElement).innerText]),
      );
    expect(shown).toEqual(t.alerts.map((a: any) => [a.kind, a.message]));
  });

  it('a share link made on the page opens this dashboard in this view, without a key, and nothing else', async () => {
    if (!(await page.locator('#share-open').isVisible())) throw new Error('no Share button');
    await page.selectOption('#chart-group', 'week');
    await page.click('#share-open');
    await page.fill('#share-days', '7');
    await page.click('#share-create');
    await page.locator('#share-result').waitFor({ state: 'visible' });
    const url = await page.locator('#share-url').inputValue();
    expect(url).toContain('/dashboard/#share=');
    expect(url).toContain('points=week');
    expect(url).not.toContain(DEMO.apiKey);
    await page.click('#share-open');

    // A tab of someone without a key.
    const other = await browser.context.newPage();
    const calls: string[] = [];
    other.on('request', (r: Request) => {
      if (r.url().includes('/api/')) calls.push(new URL(r.url()).pathname);
    });
    try {
      await other.goto(url);
      await loaded(other);
      expect(await other.locator('#signin').isVisible()).toBe(false);
      expect(await other.locator('#tpl-section').isVisible()).toBe(false);
      expect(await other.locator('#sign-out').isVisible()).toBe(false);
      expect(await other.locator('#share-open').isVisible()).toBe(false);
      expect(await other.locator('#list option').count()).toBe(1);
      expect(await other.locator('#chart-group').inputValue()).toBe('week');
      const t = await api('automation.statsTotals', period());
      expect(await other.locator('[data-kpi="revenue-ron"] .kpi-value').innerText()).toBe(
        t.formatted_revenue_ron,
      );
      expect(await other.locator('[data-kpi="recipients"] .kpi-value').innerText()).toBe(int(t.recipients));
      // Only the share link's reads: no API 1.2 call, no key anywhere.
      expect(calls.length).toBeGreaterThan(0);
      for (const c of calls) expect(c).toMatch(/^\/api\/share\/[^/]+\/(lists|stats|totals|by-workflow)$/);
      // Another list through the same link: the link's list is answered, whatever list_id is asked.
      const token = new URLSearchParams(new URL(url).hash.slice(1)).get('share')!;
      const res = await fetch(`${service.url}/api/share/${token}/totals?list_id=2&days=30`);
      const answer = await res.json();
      expect(answer.list_id).toBe('1');
      expect(answer.recipients).toBe(
        (await api('automation.statsTotals', { list_id: 1, days: 30 })).recipients,
      );
      // Nothing but the share reads: no API 1.2 operation with the token.
      const render = await fetch(`${service.url}/api/share/${token}/templates`);
      expect(render.status).toBeGreaterThanOrEqual(400);
    } finally {
      await other.close();
    }
    await page.selectOption('#chart-group', 'day');
  });

  it('a link that is not valid (unknown, revoked, expired: one answer) says so, and shows no figures', async () => {
    const other = await browser.context.newPage();
    try {
      await other.goto(`${service.url}/dashboard/#share=${'A'.repeat(43)}`);
      await other.locator('#signin-error').waitFor({ state: 'visible' });
      expect(await other.locator('#signin-h').innerText()).toBe('This link does not open a dashboard');
      const text = await other.locator('#signin-error').innerText();
      expect(text).toContain('This share link is not valid (unknown, revoked or expired)');
      expect(text).toContain('ask whoever sent it for a new one');
      expect(await other.locator('#signin-form').isVisible()).toBe(false);
      expect(await other.locator('#app').isVisible()).toBe(false);
    } finally {
      await other.close();
    }
  });

  it('no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
