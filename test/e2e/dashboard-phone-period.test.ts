import type { Page } from 'playwright-core';
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
 * The dashboard for the marketer, at 1440×900 and at 390×844 (a phone), on the demo's data (activity
 * today too): periods that end yesterday unless today is asked for, the presets "year to date" and
 * "last 12 months", the same period last year as the comparison; every view choice in the address; on a
 * phone the first screen shows figures (filters folded into one line, a header of two lines); chart
 * titles that follow the points; workflows side by side as bars of totals. Figures are compared with
 * the API's own answer for the same dates.
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
const sum = (rows: any[], f: string) => rows.reduce((a, r) => a + r[f], 0);

beforeAll(async () => {
  buildDashboard();
  service = await startTestService();
  today = todayIn(TZ);
  expect((await service.pipeline.ingest(demoRecords())).rejected).toEqual([]);
  // A send of list 1 now: the demo's days end at the current UTC day, so just after midnight in the
  // list's zone (22:00 UTC in winter) "today" had no row and the "Include today" test failed.
  const now = { type: 'send', event_id: 'period-today', list_id: 1, workflow_id: 1, subscriber_id: 1 };
  expect((await service.ingest([{ ...now, timestamp: Date.now() }])).body.rejected).toEqual([]);
}, 300_000);

afterAll(async () => {
  await service?.stop();
});

describe.each(VIEWPORTS)('at $width×$height ($name)', (vp) => {
  let browser: Browser;
  let page: Page;
  const pageErrors: string[] = [];
  const phone = vp.name === 'phone';
  const kpi = (key: string) => page.locator(`[data-kpi="${key}"] .kpi-value`).innerText();
  const kpiBefore = (key: string) => page.locator(`[data-kpi="${key}"] .kpi-prev`).innerText();
  /** On a phone the filters are folded: open them to change one. */
  async function openFilters(): Promise<void> {
    if (phone && !(await page.locator('#period').isVisible())) await page.click('#filters-toggle');
  }

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

  it('"Last 30 days" ends yesterday by default; "Include today" is one choice away', async () => {
    const yesterday = shift(today, -1);
    const from = shift(yesterday, -29);
    expect(await page.locator('#period-text').innerText()).toContain(`${from} – ${yesterday}, compared with`);
    const days: any[] = await api('automation.stats', { list_id: 1, start_date: from, stop_date: yesterday });
    expect(days.at(-1).date).toBe(yesterday);
    expect(await kpi('sends')).toBe(int(sum(days, 'sends_total')));
    expect(await page.locator('#filters-summary-text').innerText()).toContain('Last 30 days');

    await openFilters();
    await page.check('#include-today');
    await loaded(page);
    const withToday: any[] = await api('automation.stats', { list_id: 1, days: 30 });
    expect(withToday.at(-1).date).toBe(today);
    expect(await page.locator('#period-text').innerText()).toContain(`${shift(today, -29)} – ${today}`);
    expect(await kpi('sends')).toBe(int(sum(withToday, 'sends_total')));
    expect(page.url()).toContain('today=1');
    await page.uncheck('#include-today');
    await loaded(page);
    expect(page.url()).not.toContain('today=1');
  });

  it('presets: year to date and the last 12 months; the same period last year as the comparison', async () => {
    await openFilters();
    await page.selectOption('#period', 'year-to-date');
    await loaded(page);
    const ytdFrom = `${today.slice(0, 4)}-01-01`;
    const ytdTo = today.endsWith('-01-01') ? today : shift(today, -1);
    expect(await page.locator('#period-text').innerText()).toContain(`${ytdFrom} – ${ytdTo}`);

    await page.selectOption('#period', 'last-12-months');
    await loaded(page);
    const monthStart = `${today.slice(0, 8)}01`;
    const to = shift(monthStart, -1);
    const from = `${Number(today.slice(0, 4)) - 1}-${today.slice(5, 7)}-01`;
    expect(await page.locator('#period-text').innerText()).toContain(`${from} – ${to}`);
    // A year of points reads per week or month: the chart titles say which.
    expect(await page.locator('#cap-activity').innerText()).toMatch(/per (week|month)/);

    await page.selectOption('#period', 'days:30');
    await page.selectOption('#compare', 'year');
    await loaded(page);
    const y = shift(today, -1);
    const lastYear = (d: string) => `${Number(d.slice(0, 4)) - 1}${d.slice(4)}`;
    expect(await page.locator('#period-text').innerText()).toContain(
      `compared with ${lastYear(shift(y, -29))} – ${lastYear(y)}`,
    );
    const before = await api('automation.statsTotals', {
      list_id: 1,
      start_date: lastYear(shift(y, -29)),
      stop_date: lastYear(y),
    });
    // The demo's 90 days hold nothing a year ago: the cards say so, against the API's own zero.
    expect(before.purchase_count).toBe(0);
    expect(await kpiBefore('revenue-ron')).toContain(`before: ${before.formatted_revenue_ron}`);
    expect(page.url()).toContain('compare=year');
    expect(await page.locator('#filters-summary-text').innerText()).toContain('vs last year');
    await page.selectOption('#compare', 'previous');
    await loaded(page);
  });

  it('every view choice is in the address, and the address brings the view back', async () => {
    await openFilters();
    await page.selectOption('#period', 'days:90');
    await loaded(page);
    await page.selectOption('#chart-group', 'week');
    await page.selectOption('#chart-currency', 'EUR');
    await page.selectOption('#wf-bars-measure', 'revenue');
    await page.click('#wf th[data-col="sends_total"] button');
    await page.click('#wf-rates th[data-col="openRate"] button');
    const url = page.url();
    for (const part of [
      'period=days:90',
      'points=week',
      'money=EUR',
      'bars=revenue',
      'sort=sends_total:descending',
    ])
      expect(url).toContain(part);
    expect(url).toContain('rank=openRate:descending');
    expect(url).not.toContain(DEMO.apiKey);

    // The same address in a new tab (signed in again): the same view.
    const other = await browser.context.newPage();
    try {
      await other.goto(url);
      await signInAs(other, DEMO.userId, DEMO.apiKey);
      await loaded(other);
      expect(await other.locator('#period').inputValue()).toBe('days:90');
      expect(await other.locator('#chart-group').inputValue()).toBe('week');
      expect(await other.locator('#chart-currency').inputValue()).toBe('EUR');
      expect(await other.locator('#wf-bars-measure').inputValue()).toBe('revenue');
      expect(await other.locator('#wf th[data-col="sends_total"]').getAttribute('aria-sort')).toBe(
        'descending',
      );
      expect(await other.locator('#wf-rates th[data-col="openRate"]').getAttribute('aria-sort')).toBe(
        'descending',
      );
      expect(await other.locator('#cap-activity').innerText()).toContain('per week');
      expect(other.url()).toBe(url);
    } finally {
      await other.close();
    }
    await page.selectOption('#chart-group', 'day');
    await page.selectOption('#chart-currency', 'RON');
    await page.selectOption('#wf-bars-measure', 'sends');
    await page.selectOption('#period', 'days:30');
    await loaded(page);
  });

  it('chart titles follow the points: per day, per week, per month', async () => {
    for (const by of ['week', 'month', 'day'] as const) {
      await page.selectOption('#chart-group', by);
      for (const id of ['cap-activity', 'cap-rates', 'cap-revenue', 'cap-aov'])
        expect(await page.locator(`#${id}`).innerText()).toContain(`per ${by}`);
    }
  });

  it('workflows side by side: a readable bar of each workflow’s total, equal to the table', async () => {
    const bars = page.locator('#wf-bars li');
    expect(await bars.count()).toBe(5);
    const values = await bars.evaluateAll((lis) =>
      lis.map((li) => ({
        id: (li as HTMLElement).dataset.workflow!,
        value: Number((li as HTMLElement).dataset.value),
      })),
    );
    // Biggest first, each the table's sends (total) of that workflow.
    expect(values.map((v) => v.value)).toEqual([...values.map((v) => v.value)].sort((a, b) => b - a));
    for (const v of values)
      expect(await page.locator(`#wf tr[data-key="${v.id}"] td[data-col="sends_total"] .v`).innerText()).toBe(
        int(v.value),
      );
    // Readable: each name and value on screen at its own width, not squeezed to nothing.
    for (const sel of ['.bar-name', '.bar-value']) {
      const widths = await page
        .locator(`#wf-bars ${sel}`)
        .evaluateAll((xs) => xs.map((x) => x.getBoundingClientRect().width));
      for (const w of widths) expect(w).toBeGreaterThan(40);
    }
    const track = await page.locator('#wf-bars .bar-track').first().boundingBox();
    expect(track!.width).toBeGreaterThan(phone ? 150 : 400);
  });

  it(
    phone
      ? 'the first screen shows figures: filters in one line, a header of two'
      : 'the filters are shown whole',
    async () => {
      await page.evaluate(() => window.scrollTo(0, 0));
      if (!phone) {
        expect(await page.locator('#filters-summary').isVisible()).toBe(false);
        expect(await page.locator('#period').isVisible()).toBe(true);
        return;
      }
      if (await page.locator('#period').isVisible()) await page.click('#filters-toggle');
      expect(await page.locator('#filters').isVisible()).toBe(false);
      // One line of filters: its height is one line of text (plus the button's padding).
      const summary = (await page.locator('#filters-summary').boundingBox())!;
      expect(summary.height).toBeLessThanOrEqual(40);
      // The header in two lines: its text boxes sit on at most two rows.
      const rows = await page.locator('header.top').evaluate((h) => {
        const tops = new Set<number>();
        const walker = document.createTreeWalker(h, NodeFilter.SHOW_TEXT);
        for (let n = walker.nextNode(); n; n = walker.nextNode()) {
          if (!n.textContent?.trim() || !(n.parentElement as HTMLElement).offsetParent) continue;
          const range = document.createRange();
          range.selectNodeContents(n);
          for (const r of range.getClientRects()) if (r.width > 0) tops.add(Math.round(r.top / 8));
        }
        return tops.size;
      });
      expect(rows).toBeLessThanOrEqual(2);
      // Figures in the first screen: at least six cards whole above the fold, their labels short.
      const cards = await page.locator('#kpis .kpi').evaluateAll((ks) =>
        ks.map((k) => ({
          bottom: k.getBoundingClientRect().bottom,
          label: k.querySelector('.kpi-label')!.textContent!,
        })),
      );
      const inView = cards.filter((c) => c.bottom <= 844);
      expect(inView.length).toBeGreaterThanOrEqual(6);
      for (const c of inView) expect(c.label.length).toBeLessThanOrEqual(16);
      // The formulas are in the help, one tap away.
      expect(await page.locator('#totals-help summary').isVisible()).toBe(true);
      await page.screenshot({ path: '.cache/screenshots/phone-first-screen.png' });
      // "Change" opens the filters, "Done" folds them again.
      await page.click('#filters-toggle');
      expect(await page.locator('#period').isVisible()).toBe(true);
      expect(await page.locator('#filters-toggle').getAttribute('aria-expanded')).toBe('true');
      await page.click('#filters-toggle');
      expect(await page.locator('#period').isVisible()).toBe(false);
    },
  );

  it('no script errors', () => {
    expect(pageErrors).toEqual([]);
  });
});
