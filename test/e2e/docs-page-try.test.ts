import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, ensureChromium } from '../support/browser.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * /docs on a phone and in "Try it out", in Debian's Chromium: the page lays out at
 * the phone's width (a viewport meta tag; without it a phone lays the page out 980 px wide and shrinks
 * it), and an operation's "Try it out" prefills only parameters that take effect together — the period's
 * start_date and stop_date, not days and month, which the dates override (docs/api.md "Period").
 */
let service: TestService;
let context: BrowserContext;
let page: Page;
let profile: string;

beforeAll(async () => {
  ensureChromium();
  service = await startTestService();
  profile = mkdtempSync(join(tmpdir(), 'mailstats-chromium-'));
  // A phone: 390×844 CSS px, mobile layout (the viewport meta tag is honoured), touch.
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 390, height: 844 },
    isMobile: true,
    hasTouch: true,
    deviceScaleFactor: 3,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
    ],
  });
  page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`${service.url}/docs`);
  await page.locator('.opblock').first().waitFor({ timeout: 60_000 });
}, 180_000);

afterAll(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await service?.stop();
});

describe('/docs on a phone (390×844)', () => {
  it('lays out at the phone’s width', async () => {
    const viewport = await page.evaluate(() => ({
      meta: document.querySelector('meta[name="viewport"]')?.getAttribute('content') ?? null,
      width: window.innerWidth,
    }));
    expect(viewport.meta).toContain('width=device-width');
    expect(viewport.width).toBe(390);
  });
});

describe('"Try it out" of automation.stats', () => {
  it('prefills start_date and stop_date, leaves days and month empty; the descriptions say which wins', async () => {
    const block = page.locator('.opblock-get[id$="automationStatsGet"]').first();
    await block.locator('.opblock-summary').click();
    await block.locator('button.try-out__btn').click();
    const value = (name: string) =>
      block
        .locator(`tr[data-param-name="${name}"] input, tr[data-param-name="${name}"] select`)
        .first()
        .inputValue();
    await block.locator('tr[data-param-name="start_date"] input').waitFor();
    expect(await value('start_date')).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(await value('stop_date')).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(await value('days')).toBe('');
    expect(await value('month')).toBe('');
    const description = (name: string) =>
      block
        .locator(`tr[data-param-name="${name}"] .parameters-col_description .renderedMarkdown`)
        .first()
        .innerText();
    for (const name of ['start_date', 'stop_date', 'days', 'month'])
      expect(await description(name), name).toMatch(
        /start_date\/stop_date win over month, which wins over days/,
      );
  });
});
