import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, DEMO_ORDER_PARAMS } from '../../ingest/demo-seed.js';
import {
  buildDashboard,
  ensureChromium,
  launchBrowser,
  loaded,
  shift,
  todayIn,
  type Browser,
} from '../support/browser.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * The dashboard in a real browser (Debian's Chromium driven by playwright-core) against the real
 * service with the demo tenant: every figure shown is compared with the API's own answer for the same
 * query, fetched here.
 */
const SHOTS = join(process.cwd(), '.cache', 'screenshots');
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

let service: TestService;
let context: BrowserContext;
let page: Page;
let browser: Browser;
const external: string[] = [];
const pageErrors: string[] = [];

/** POST an operation as the dashboard does, straight to the API. */
async function api(operation: string, params: object, key: string = DEMO.apiKey): Promise<any> {
  const res = await fetch(`${service.url}/api/1.2/rest/${DEMO.userId}/${key}/${operation}.json`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(params),
  });
  return res.json();
}

const int = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, '.');
const cents = (c: number) => `${int(Math.trunc(c / 100))},${String(c % 100).padStart(2, '0')}`;
const sum = (rows: any[], f: string) => rows.reduce((a, r) => a + r[f], 0);

const kpi = (key: string) => page.locator(`[data-kpi="${key}"] .kpi-value`).innerText();
const kpiChange = (key: string) => page.locator(`[data-kpi="${key}"] .kpi-change`).innerText();

/** The KPI cards and the table of days equal the API's answer for the same query. */
async function expectShownEqualsApi(params: object, previous: object | undefined): Promise<any[]> {
  const rows: any[] = await api('automation.stats', params);
  expect(Array.isArray(rows), JSON.stringify(rows)).toBe(true);
  expect(await kpi('sends')).toBe(int(sum(rows, 'sends_total')));
  expect(await kpi('purchases')).toBe(int(sum(rows, 'purchase_count')));
  expect(await kpi('bounces')).toBe(int(sum(rows, 'bounce_total')));
  expect(await kpi('unsubscribes')).toBe(int(sum(rows, 'unsub_total')));
  // Money: the period's exact sum rounded once, as automation.statsTotals answers it for the same query.
  const money = await api('automation.statsTotals', params);
  expect(money.purchase_count).toBe(sum(rows, 'purchase_count'));
  expect(await kpi('revenue-ron')).toBe(money.formatted_revenue_ron);
  expect(await kpi('revenue-eur')).toBe(money.formatted_revenue_eur);
  expect(await kpi('aov-ron')).toBe(money.purchase_count ? money.formatted_value_aov_ron : '—');
  // The open rate is of people (openers ÷ recipients) where the service counts them over the period,
  // else of the days' unique counts (docs/dashboard.md "Figures").
  const [opened, reached] =
    typeof money.recipients === 'number'
      ? [money.openers, money.recipients]
      : [sum(rows, 'opens_unique'), sum(rows, 'sends_unique')];
  const rate = reached ? Math.round((opened * 10_000) / reached) : 0;
  expect(await kpi('open-rate')).toBe(reached ? `${cents(rate)} %` : '—');
  if (previous) {
    const prev: any[] = await api('automation.stats', previous);
    const [c, p] = [sum(rows, 'sends_total'), sum(prev, 'sends_total')];
    const tenths = p === 0 ? 0 : Math.round((Math.abs(c - p) * 1000) / p);
    // Nothing in the previous period (e.g. 90 days back from the demo's first day): no percentage.
    const text =
      c === p
        ? 'no change'
        : p === 0
          ? 'new (none before)'
          : `${c > p ? '▲ +' : '▼ −'}${int(Math.trunc(tenths / 10))},${tenths % 10} %`;
    expect(await kpiChange('sends')).toBe(text);
  }
  // The table of days: one row per day the API answered, its values as the API gave them.
  const dates = await page.locator('#days tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.key));
  expect(dates).toEqual(rows.map((r) => r.date));
  if (rows.length > 0) {
    const last = rows.at(-1);
    const cells = await page.locator(`#days tbody tr[data-key="${last.date}"] > *`).allInnerTexts();
    expect(cells[0]).toBe(last.date);
    expect(cells[1]).toBe(int(last.sends_unique));
    expect(cells).toContain(last.formatted_revenue_ron);
  }
  return rows;
}

/** RFC 4180 CSV (CRLF lines, quoted fields) → rows of cells. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  const endCell = () => {
    row.push(cell);
    cell = '';
  };
  const endRow = () => {
    endCell();
    rows.push(row);
    row = [];
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') endCell();
    else if (ch === '\r' && text[i + 1] === '\n') {
      endRow();
      i++;
    } else cell += ch;
  }
  if (cell !== '' || row.length > 0) endRow();
  return rows;
}

/** What a uPlot chart container holds: its canvases' sizes, whether they have drawn pixels, a pixel digest. */
async function chartOf(id: string) {
  return page.locator(`#${id}`).evaluate((el, id) => {
    const canvases = [...el.querySelectorAll<HTMLCanvasElement>('.uplot canvas')];
    return {
      plots: el.querySelectorAll('.uplot').length,
      canvases: canvases.map((c) => {
        const data = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
        let painted = 0;
        for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) painted++;
        // Tag the element: a redraw replaces it with a new canvas (uPlot is destroyed and rebuilt).
        const tagged = (c as any).__seen === true;
        (c as any).__seen = true;
        return { width: c.width, height: c.height, painted, tagged, image: c.toDataURL() };
      }),
      legend: [...el.querySelectorAll('.u-legend .u-series .u-label')].map((l) => l.textContent),
      id,
    };
  }, id);
}

/** Moves the focus with the keyboard alone until `selector` has it (at most 80 presses: the page has two sortable tables). */
async function tabTo(selector: string, key: 'Tab' | 'Shift+Tab' = 'Tab'): Promise<void> {
  for (let i = 0; i < 80; i++) {
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
    await page.keyboard.press(key);
  }
  throw new Error(`${key} never reached ${selector}`);
}

beforeAll(async () => {
  ensureChromium();
  buildDashboard();
  service = await startTestService({ SEED_DEMO: 'true' });
  expect(service.seeded).toBe(true);
  mkdirSync(SHOTS, { recursive: true });
  browser = await launchBrowser();
  ({ context, page } = browser);
  context.on('request', (r) => {
    const url = new URL(r.url());
    if (['http:', 'https:', 'ws:', 'wss:'].includes(url.protocol) && !LOOPBACK.has(url.hostname))
      external.push(r.url());
  });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  // These figures are compared with the API's `days=N` (today included): the view with today
  // (docs/dashboard.md "Choosing what to show"; periods end yesterday unless today is asked for).
  await page.goto(`${service.url}/dashboard/#today=1`);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

describe('dashboard in Chromium (demo tenant)', () => {
  it('a wrong key shows the API’s 101 message and nothing else', async () => {
    const answer = await api('list.all', {}, 'not-the-key');
    expect(answer).toMatchObject({ err: true, code: 101 });
    await page.fill('#user-id', String(DEMO.userId));
    await page.fill('#api-key', 'not-the-key');
    await page.click('#signin-form button[type=submit]');
    await expect
      .poll(() => page.locator('#signin-error').textContent())
      .toBe(`${answer.message} (code ${answer.code})`);
    expect(await page.locator('#app').isHidden()).toBe(true);
  });

  it('signs in with the keyboard alone; the key never appears in the URL', async () => {
    await page.fill('#user-id', '');
    await page.fill('#api-key', '');
    await page.focus('#user-id');
    await page.keyboard.type(String(DEMO.userId));
    await page.keyboard.press('Tab');
    await page.keyboard.type(DEMO.apiKey);
    await page.keyboard.press('Enter');
    await loaded(page);
    expect(page.url()).not.toContain(DEMO.apiKey);
    expect(await page.locator('#api-key').inputValue()).toBe('');
    const lists: any[] = await api('list.all', {});
    const options = await page
      .locator('#list option')
      .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(options).toEqual(lists.map((l) => l.list_id));
    const meta = await page.locator('#list-meta').innerText();
    expect(meta).toContain(lists[0].timezone);
    expect(meta).toContain(lists[0].currency);
  });

  it('shows the last 30 days of list 1 exactly as the API answers, compared with the 30 days before', async () => {
    const today = todayIn('Europe/Bucharest');
    const rows = await expectShownEqualsApi(
      { list_id: 1, days: 30 },
      { list_id: 1, start_date: shift(today, -59), stop_date: shift(today, -30) },
    );
    expect(rows.length).toBeGreaterThan(20);
    expect(await page.locator('#period-text').innerText()).toContain(`${shift(today, -29)} – ${today}`);
    await page.screenshot({ path: join(SHOTS, 'dashboard-1280.png'), fullPage: true });
    // The first screen at 1280 px (docs/screenshots/ are made by `npm run screenshots`, not by this test).
    await page.screenshot({ path: join(SHOTS, 'dashboard-first-screen-1280.png') });
  });

  it('draws the daily charts (sends/opens/clicks, revenue) and redraws them when the period changes', async () => {
    const rows: any[] = await api('automation.stats', { list_id: 1, days: 30 });
    expect(rows.length).toBeGreaterThan(0);
    const before = { activity: await chartOf('chart-activity'), revenue: await chartOf('chart-revenue') };
    for (const [name, c] of Object.entries(before)) {
      expect(c.plots, name).toBe(1);
      expect(c.canvases.length, name).toBeGreaterThan(0);
      for (const canvas of c.canvases) {
        expect(canvas.width, name).toBeGreaterThan(0);
        expect(canvas.height, name).toBeGreaterThan(0);
        expect(canvas.painted, `${name}: drawn pixels`).toBeGreaterThan(0);
      }
    }
    // The previous period is laid over the main line of each chart, dotted.
    expect(before.activity.legend).toEqual([
      'Date',
      'Sends (unique)',
      'Opens (unique)',
      'Clicks (unique)',
      'Sends (unique), previous period',
    ]);
    // One currency at a time: the list's own.
    expect(before.revenue.legend).toEqual(['Date', 'RON', 'RON, previous period']);

    await page.selectOption('#period', 'days:7');
    const today = todayIn('Europe/Bucharest');
    await expect
      .poll(() => page.locator('#period-text').innerText())
      .toContain(`${shift(today, -6)} – ${today}`);
    await loaded(page);
    for (const id of ['chart-activity', 'chart-revenue'] as const) {
      const after = await chartOf(id);
      const old = id === 'chart-activity' ? before.activity : before.revenue;
      expect(after.plots, id).toBe(1);
      expect(after.canvases.length, id).toBe(old.canvases.length);
      for (const [i, canvas] of after.canvases.entries()) {
        expect(canvas.tagged, `${id}: a new canvas`).toBe(false);
        expect(canvas.width, id).toBeGreaterThan(0);
        expect(canvas.height, id).toBeGreaterThan(0);
        expect(canvas.painted, `${id}: drawn pixels`).toBeGreaterThan(0);
        expect(canvas.image === old.canvases[i]!.image, `${id}: other pixels for 7 days than for 30`).toBe(
          false,
        );
      }
    }
    await page.selectOption('#period', 'days:30');
    await expect
      .poll(() => page.locator('#period-text').innerText())
      .toContain(`${shift(today, -29)} – ${today}`);
    await loaded(page);
  });

  it('per-workflow rows equal one stats call per workflow', async () => {
    const workflows: any[] = await api('automation.workflows', { list_id: 1 });
    expect(workflows.map((w) => w.workflow_id)).toEqual([1, 2, 3, 4, 5]);
    const keys = await page.locator('#wf tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.key));
    expect(keys).toEqual(workflows.map((w) => String(w.workflow_id)));
    for (const w of workflows) {
      const rows: any[] = await api('automation.stats', {
        list_id: 1,
        days: 30,
        workflow_ids: [w.workflow_id],
      });
      // Cells by column (the table has the columns of the table of days, each value over its change).
      const row = page.locator(`#wf tbody tr[data-key="${w.workflow_id}"]`);
      expect(await row.locator('th').innerText()).toBe(`${w.name} (#${w.workflow_id})`);
      expect(await row.locator('td[data-col="sends_total"] .v').innerText()).toBe(
        int(sum(rows, 'sends_total')),
      );
      const money = await api('automation.statsTotals', {
        list_id: 1,
        days: 30,
        workflow_ids: [w.workflow_id],
      });
      expect(await row.locator('td[data-col="purchases_value_ron"] .v').innerText()).toBe(
        money.formatted_revenue_ron,
      );
    }
  });

  it('exports the table of days as CSV with the API’s values', async () => {
    const rows: any[] = await api('automation.stats', { list_id: 1, days: 30 });
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-days')]);
    const file = await download.path();
    const lines = readFileSync(file!, 'utf8').trimEnd().split('\r\n');
    const header = lines[0]!.split(',');
    expect(header[0]).toBe('date');
    expect(lines.length - 1).toBe(rows.length);
    for (const [i, r] of rows.entries()) {
      const cellsOf = lines[i + 1]!.split(',');
      header.forEach((h, j) => expect(cellsOf[j], `${r.date} ${h}`).toBe(String(r[h])));
    }
    expect(header).toEqual(
      expect.arrayContaining(['sends_unique', 'purchases_value_ron', 'opens_unique_percent']),
    );
  });

  it('exports the per-workflow table as CSV: the table’s headings, columns and rows, the API’s figures', async () => {
    const workflows: any[] = await api('automation.workflows', { list_id: 1 });
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-workflows')]);
    const today = todayIn('Europe/Bucharest');
    expect(download.suggestedFilename()).toBe(`mailstats-list1-${shift(today, -29)}_${today}-workflows.csv`);
    const csv = parseCsv(readFileSync((await download.path())!, 'utf8'));
    const header = csv[0]!;
    const onScreen = await page
      .locator('#wf thead th')
      .evaluateAll((ths) => ths.map((th) => (th as HTMLElement).innerText.trim()));
    expect(header).toEqual(onScreen);
    // The workflows in the table's order (by name), then the total row.
    expect(csv.slice(1, -1).map((r) => r[0])).toEqual(workflows.map((w) => `${w.name} (#${w.workflow_id})`));
    expect(csv.at(-1)![0]).toBe('All workflows of the list, together');
    for (const [i, w] of workflows.entries()) {
      const params = { list_id: 1, days: 30, workflow_ids: [w.workflow_id] };
      const rows: any[] = await api('automation.stats', params);
      const money = await api('automation.statsTotals', params);
      // The table's columns are automation.statsByWorkflow's: each equals that workflow's own
      // automation.statsTotals (people, money, rates) and the sum of its days (counts of records).
      const expected: Record<string, number> = {
        Recipients: money.recipients,
        Openers: money.openers,
        Clickers: money.clickers,
        Buyers: money.buyers,
        'Open rate % (openers ÷ recipients)': money.opens_unique_percent,
        'Click rate % (clickers ÷ recipients)': money.clicks_unique_percent,
        'Sends (total)': sum(rows, 'sends_total'),
        'Opens (total)': sum(rows, 'opens_total'),
        'Clicks (total)': sum(rows, 'clicks_total'),
        'Purchases (total)': sum(rows, 'purchase_count'),
        'Revenue RON': money.purchases_value_ron,
        'Revenue EUR': money.purchases_value_eur,
      };
      expect(money.recipients).toBeLessThanOrEqual(sum(rows, 'sends_unique'));
      const line = csv[i + 1]!;
      expect(line.length).toBe(header.length);
      for (const [h, v] of Object.entries(expected))
        expect(line[header.indexOf(h)], `workflow ${w.workflow_id} ${h}`).toBe(String(v));
      expect(expected['Sends (total)']).toBeGreaterThan(0);
    }
  });

  it('switches period: last 7 days, last month, custom range', async () => {
    await page.selectOption('#period', 'days:7');
    await loaded(page);
    const today = todayIn('Europe/Bucharest');
    await expectShownEqualsApi(
      { list_id: 1, days: 7 },
      { list_id: 1, start_date: shift(today, -13), stop_date: shift(today, -7) },
    );

    await page.selectOption('#period', 'last-month');
    await loaded(page);
    const lastDay = shift(`${today.slice(0, 8)}01`, -1);
    // Compared with the whole month before it, whatever its length.
    const monthBeforeEnd = shift(`${lastDay.slice(0, 8)}01`, -1);
    await expectShownEqualsApi(
      { list_id: 1, month: lastDay.slice(0, 7) },
      { list_id: 1, start_date: `${monthBeforeEnd.slice(0, 8)}01`, stop_date: monthBeforeEnd },
    );

    await page.selectOption('#period', 'custom');
    await loaded(page);
    const [start, stop] = [shift(today, -20), shift(today, -10)];
    await page.fill('#start', start);
    await page.fill('#stop', stop);
    await page.locator('#stop').dispatchEvent('change');
    await loaded(page);
    await expectShownEqualsApi(
      { list_id: 1, start_date: start, stop_date: stop },
      { list_id: 1, start_date: shift(start, -11), stop_date: shift(start, -1) },
    );
  });

  it('a reversed custom range is refused in the page, before the API is called (the API refuses it too)', async () => {
    const today = todayIn('Europe/Bucharest');
    const answer = await api('automation.stats', {
      list_id: 1,
      start_date: today,
      stop_date: shift(today, -3),
    });
    expect(answer.code).toBe(406);
    const calls: string[] = [];
    const count = (r: { url(): string }) => {
      if (r.url().endsWith('/automation.stats.json')) calls.push(r.url());
    };
    page.on('request', count);
    await page.fill('#start', today);
    await page.fill('#stop', shift(today, -3));
    await page.locator('#stop').dispatchEvent('change');
    await expect
      .poll(() => page.locator('#error').textContent())
      .toBe(
        `The end date ${shift(today, -3)} is before the start date ${today}: pick an end on or after the start.`,
      );
    page.off('request', count);
    expect(calls).toEqual([]);
    await page.selectOption('#period', 'days:30');
    await loaded(page);
  });

  it('the last-90-days and this-month presets show what the API answers for the same days', async () => {
    const today = todayIn('Europe/Bucharest');
    await page.selectOption('#period', 'days:90');
    await expect
      .poll(() => page.locator('#period-text').innerText())
      .toContain(
        `${shift(today, -89)} – ${today}, compared with ${shift(today, -179)} – ${shift(today, -90)}`,
      );
    await loaded(page);
    const ninety = await expectShownEqualsApi(
      { list_id: 1, days: 90 },
      { list_id: 1, start_date: shift(today, -179), stop_date: shift(today, -90) },
    );
    // days=90 is today and the 89 days before it.
    const explicit: any[] = await api('automation.stats', {
      list_id: 1,
      start_date: shift(today, -89),
      stop_date: today,
    });
    expect(ninety).toEqual(explicit);

    // This month: the 1st to today, compared with as many days before the 1st.
    const first = `${today.slice(0, 8)}01`;
    const len = Number(today.slice(8));
    await page.selectOption('#period', 'this-month');
    await expect
      .poll(() => page.locator('#period-text').innerText())
      .toContain(`${first} – ${today}, compared with ${shift(first, -len)} – ${shift(first, -1)}`);
    await loaded(page);
    const month = await expectShownEqualsApi(
      { list_id: 1, start_date: first, stop_date: today },
      { list_id: 1, start_date: shift(first, -len), stop_date: shift(first, -1) },
    );
    // The same days as the API's month=YYYY-MM up to today.
    const whole: any[] = await api('automation.stats', { list_id: 1, month: today.slice(0, 7) });
    expect(month).toEqual(whole.filter((r) => r.date <= today));

    await page.selectOption('#period', 'days:30');
    await expect
      .poll(() => page.locator('#period-text').innerText())
      .toContain(`${shift(today, -29)} – ${today}`);
    await loaded(page);
  });

  it('filters by workflows and trigger', async () => {
    await page.check('#workflow-list input[value="1"]');
    await loaded(page);
    await page.check('#workflow-list input[value="3"]');
    await loaded(page);
    await expectShownEqualsApi({ list_id: 1, days: 30, workflow_ids: [1, 3] }, undefined);
    const keys = await page.locator('#wf tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.key));
    expect(keys).toEqual(['1', '3']);

    await page.fill('#trigger', '10');
    await page.locator('#trigger').dispatchEvent('change');
    await loaded(page);
    const rows = await expectShownEqualsApi(
      { list_id: 1, days: 30, workflow_ids: [1, 3], trigger_id: 10 },
      undefined,
    );
    // Trigger 10 starts workflow 1 only: fewer sends than both workflows together.
    const both: any[] = await api('automation.stats', { list_id: 1, days: 30, workflow_ids: [1, 3] });
    expect(sum(rows, 'sends_total')).toBeLessThan(sum(both, 'sends_total'));
    expect(sum(rows, 'sends_total')).toBeGreaterThan(0);

    await page.fill('#trigger', '');
    await page.locator('#trigger').dispatchEvent('change');
    await loaded(page);
    await page.uncheck('#workflow-list input[value="1"]');
    await loaded(page);
    await page.uncheck('#workflow-list input[value="3"]');
    await loaded(page);
  });

  it('list, period and a workflow can be picked with the keyboard alone', async () => {
    const london = todayIn('Europe/London');
    const today = todayIn('Europe/Bucharest');
    await tabTo('#list');
    await page.keyboard.press('ArrowDown');
    await expect.poll(() => page.locator('#list-meta').innerText()).toContain('Europe/London');
    await loaded(page);
    await expectShownEqualsApi(
      { list_id: 2, days: 30 },
      { list_id: 2, start_date: shift(london, -59), stop_date: shift(london, -30) },
    );
    await page.keyboard.press('ArrowUp');
    await expect.poll(() => page.locator('#list-meta').innerText()).toContain('Europe/Bucharest');
    await loaded(page);
    expect(await page.locator('#list').inputValue()).toBe('1');

    // Last 30 days → the next option, Last 90 days.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('period');
    await page.keyboard.press('ArrowDown');
    await expect
      .poll(() => page.locator('#period-text').innerText())
      .toContain(`${shift(today, -89)} – ${today}`);
    await loaded(page);
    expect(await page.locator('#period').inputValue()).toBe('days:90');
    await expectShownEqualsApi(
      { list_id: 1, days: 90 },
      { list_id: 1, start_date: shift(today, -179), stop_date: shift(today, -90) },
    );

    // The first workflow's checkbox, ticked with Space.
    await tabTo('#workflow-list input[value="1"]');
    await page.keyboard.press('Space');
    await expect.poll(() => page.locator('#workflow-list input[value="1"]').isChecked()).toBe(true);
    await loaded(page);
    await expectShownEqualsApi(
      { list_id: 1, days: 90, workflow_ids: [1] },
      { list_id: 1, start_date: shift(today, -179), stop_date: shift(today, -90), workflow_ids: [1] },
    );
    const keys = await page.locator('#wf tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.key));
    expect(keys).toEqual(['1']);

    // And back: Space unticks, Shift+Tab to the period, ArrowUp to the last 30 days.
    await page.keyboard.press('Space');
    await expect.poll(() => page.locator('#workflow-list input[value="1"]').isChecked()).toBe(false);
    await loaded(page);
    await tabTo('#period', 'Shift+Tab');
    await page.keyboard.press('ArrowUp');
    await expect
      .poll(() => page.locator('#period-text').innerText())
      .toContain(`${shift(today, -29)} – ${today}`);
    await loaded(page);
    await expectShownEqualsApi(
      { list_id: 1, days: 30 },
      { list_id: 1, start_date: shift(today, -59), stop_date: shift(today, -30) },
    );
  });

  it('switches list: list 2 in its own time zone and currency', async () => {
    await page.selectOption('#list', '2');
    await loaded(page);
    const meta = await page.locator('#list-meta').innerText();
    expect(meta).toContain('Europe/London');
    expect(meta).toContain('EUR');
    const today = todayIn('Europe/London');
    await expectShownEqualsApi(
      { list_id: 2, days: 30 },
      { list_id: 2, start_date: shift(today, -59), stop_date: shift(today, -30) },
    );
    const keys = await page.locator('#wf tbody tr').evaluateAll((trs) => trs.map((tr) => tr.dataset.key));
    expect(keys).toEqual(['6', '7']);
    await page.selectOption('#list', '1');
    await loaded(page);
  });

  it('renders a template as the API does, in a sandboxed frame, and shows its errors as they come', async () => {
    const answer = await api('transactional.templateRender', {
      list_id: 1,
      account_id: 'acc-shop',
      template_id: 'order-confirmation',
      params: DEMO_ORDER_PARAMS,
    });
    expect(answer.type).toBe('html');
    await page.selectOption('#tpl-account', 'acc-shop');
    await page.selectOption('#tpl-template', 'order-confirmation');
    await page.fill('#tpl-params', JSON.stringify(DEMO_ORDER_PARAMS, null, 2));
    await page.click('#tpl-render');
    await page.locator('#tpl-result').waitFor({ state: 'visible' });
    const frame = page.locator('#tpl-frame');
    expect(await frame.getAttribute('sandbox')).toBe('');
    expect(await frame.evaluate((f) => (f as HTMLIFrameElement).srcdoc)).toBe(answer.content);
    expect(await page.locator('#tpl-props').textContent()).toBe(JSON.stringify(answer.props, null, 2));
    await expect
      .poll(() => page.frameLocator('#tpl-frame').locator('h1').innerText())
      .toContain('Thank you for your order, Ana!');
    await page.frameLocator('#tpl-frame').locator('h1').waitFor({ state: 'visible' });
    await page.locator('#tpl-h').scrollIntoViewIfNeeded();
    await page
      .locator('#tpl-h')
      .locator('xpath=..')
      .screenshot({ path: join(SHOTS, 'dashboard-template-1280.png') });

    const bad = await api('transactional.templateRender', {
      list_id: 1,
      account_id: 'acc-shop',
      template_id: 'order-confirmation',
      params: '{"customer": ',
    });
    expect(bad.code).toBe(406);
    // The API refuses it without saying where; the page says where before asking it.
    await page.fill('#tpl-params', '{"customer": ');
    await page.click('#tpl-render');
    await expect
      .poll(() => page.locator('#tpl-error').textContent())
      .toMatch(/^The params are not valid JSON: line 1, column 14: \S/);
    expect(await page.locator('#tpl-result').isHidden()).toBe(true);
  });

  it('is served with a policy that lets nothing load from another host', async () => {
    const res = await fetch(`${service.url}/dashboard`, { redirect: 'manual' });
    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe('/dashboard/');
    const page = await fetch(`${service.url}/dashboard/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await page.text()).toContain('<script type="module" crossorigin src="/dashboard/assets/');
  });

  it('fits a phone screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate(() => window.scrollTo(0, 0));
    // Nothing wider than the screen but the scrollable tables.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(SHOTS, 'dashboard-phone.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('keeps the key in this tab only: a reload stays signed in, Sign out forgets it', async () => {
    await page.reload();
    await loaded(page);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await context.cookies()).toEqual([]);
    await page.click('#sign-out');
    expect(await page.locator('#signin').isVisible()).toBe(true);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.reload();
    expect(await page.locator('#signin').isVisible()).toBe(true);
    expect(await page.locator('#app').isHidden()).toBe(true);
  });

  it('made no request to another host, and threw no script error', () => {
    expect(external).toEqual([]);
    expect(pageErrors).toEqual([]);
  });
});
