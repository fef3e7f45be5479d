import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REST_OPERATIONS, STATS_PARAMETERS } from '../support/api-operations.js';
import { launchBrowser, type Browser } from '../support/browser.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * /docs as a reader sees it: swagger-ui (Debian's Chromium driven by playwright-core) rendering the
 * service's OpenAPI document. A screenshot is left in .cache/screenshots/docs.png.
 */
const SHOTS = join(process.cwd(), '.cache', 'screenshots');

let service: TestService;
let page: Page;
let browser: Browser;

beforeAll(async () => {
  service = await startTestService();
  mkdirSync(SHOTS, { recursive: true });
  browser = await launchBrowser({ width: 1280, height: 2400 });
  page = browser.page;
  await page.goto(`${service.url}/docs`);
  await page.locator('.opblock').first().waitFor({ timeout: 60_000 });
});
afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

describe('/docs (swagger-ui)', () => {
  it('shows no warning (no jsonSchemaDialect box, no errors box)', async () => {
    expect(await page.locator('.info').innerText()).toContain('mailstats');
    expect(await page.locator('.errors-wrapper').count()).toBe(0);
    expect(await page.locator('body').innerText()).not.toMatch(
      /jsonSchemaDialect|Values different from the default/,
    );
  });

  it('the main group lists each operation once (GET); the POST (body) variants are a group after it, collapsed', async () => {
    const section = (tag: string) =>
      page.locator('.opblock-tag-section').filter({ has: page.locator(`h3[data-tag="${tag}"]`) });
    const listed = (tag: string) =>
      section(tag)
        .locator('.opblock')
        .evaluateAll((blocks) =>
          blocks.map(
            (b) =>
              `${b.querySelector('.opblock-summary-method')?.textContent} ${b
                .querySelector('.opblock-summary-path')
                ?.getAttribute('data-path')}`,
          ),
        );
    const paths = (method: string) =>
      REST_OPERATIONS.map((op) => `${method} /api/1.2/rest/{user_id}/{api_key}/${op}.json`).sort();
    const tags = await page
      .locator('h3.opblock-tag')
      .evaluateAll((hs) => hs.map((h) => h.getAttribute('data-tag')));
    expect(tags.slice(0, 2)).toEqual(['API 1.2', 'API 1.2 with a body (POST)']);
    expect((await listed('API 1.2')).sort()).toEqual(paths('GET'));
    expect(await listed('API 1.2 with a body (POST)')).toEqual([]);
    await section('API 1.2 with a body (POST)').locator('h3.opblock-tag').click();
    await section('API 1.2 with a body (POST)').locator('.opblock').first().waitFor();
    expect((await listed('API 1.2 with a body (POST)')).sort()).toEqual(paths('POST'));
    await section('API 1.2 with a body (POST)').locator('h3.opblock-tag').click();
    await section('API 1.2 with a body (POST)').locator('.opblock').first().waitFor({ state: 'detached' });
  });

  it('an operation lists the credentials first, each parameter with a plain type and a description', async () => {
    const block = page.locator('.opblock-get[id$="automationStatsGet"]').first();
    await block.locator('.opblock-summary').click();
    const rows = block.locator('tr[data-param-name]');
    await rows.first().waitFor();
    const names = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-param-name')));
    expect(names).toEqual(['user_id', 'api_key', ...STATS_PARAMETERS]);
    for (let i = 0; i < names.length; i++) {
      const row = rows.nth(i);
      const type = await row.locator('.parameter__type').innerText();
      expect(type, names[i]!).not.toMatch(/\||\(/);
      const description = await row
        .locator('.parameters-col_description .markdown, .parameters-col_description .renderedMarkdown')
        .first()
        .innerText();
      expect(description.trim().length, names[i]!).toBeGreaterThan(10);
    }
    await page.screenshot({ path: join(SHOTS, 'docs.png'), fullPage: false });
  });

  it('an answer example is shown', async () => {
    const block = page.locator('.opblock-get[id$="automationStatsGet"]').first();
    const example = await block.locator('.responses-table .highlight-code').first().innerText();
    expect(example).toContain('"sends_unique"');
  });
});
