/**
 * `npm run screenshots`: pictures of the dashboard's main views for docs/dashboard.md, written to
 * docs/screenshots/ at desktop (1440×900) and phone (390×844) size. Builds the page, starts the service
 * on a free port with a temp DATA_DIR and the demo tenant (plus a second user whose lists have activity
 * on three days only, and none at all), and drives Debian's Chromium (/usr/bin/chromium) with
 * playwright-core. Nothing leaves loopback; the temp data is removed at the end.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { DEMO, DEMO_ORDER_PARAMS, demoRecords } from '../ingest/demo-seed.js';
import { loadConfig } from '../shared/config.js';
import { startService } from '../service/start.js';

const CHROMIUM = '/usr/bin/chromium';
const OUT = join(process.cwd(), 'docs', 'screenshots');
const TOKEN = 'screenshots-ingest-token-0123456789abcdef';
const SPARSE_USER = { id: 2001, key: 'sample-key-0123456789' };
const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

if (!existsSync(CHROMIUM)) throw new Error(`Chromium is needed at ${CHROMIUM}: apt-get install -y chromium`);
execFileSync(process.execPath, ['dashboard/build.mjs'], { stdio: 'inherit' });
mkdirSync(OUT, { recursive: true });

const dir = mkdtempSync(join(tmpdir(), 'mailstats-screens-'));
// Only what the pictures need: no Kafka (records go straight to the pipeline), embedded ClickHouse.
const service = await startService(
  // The demo's records are written as the pictures' own data beside the samples (a seeded demo would be
  // removed by the first sample record: docs/records.md "The demo tenant").
  loadConfig({ DATA_DIR: dir, PORT: '0', SEED_DEMO: 'false', LOG_LEVEL: 'silent', INGEST_TOKEN: TOKEN }),
);
const base = service.url!;

const today = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'Europe/Bucharest',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
}).format(new Date());
const shift = (d: string, n: number) =>
  new Date(Date.parse(`${d}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

/** A second user: list 3 with sends on three days only, list 4 with no activity. */
async function ingestSamples(): Promise<void> {
  // The demo straight into the pipeline (as the seed does without Kafka): it is over POST /ingest's body limit.
  await service.pipeline.ingest(demoRecords());
  const records: unknown[] = [
    {
      type: 'user',
      user_id: SPARSE_USER.id,
      api_key_sha256: createHash('sha256').update(SPARSE_USER.key).digest('hex'),
    },
    { type: 'list', list_id: 3, name: 'Sparse Shop', timezone: 'Europe/Bucharest', currency: 'RON' },
    { type: 'list', list_id: 4, name: 'New List', timezone: 'Europe/Bucharest', currency: 'RON' },
    ...[3, 4].map((l) => ({ type: 'list_access', user_id: SPARSE_USER.id, list_id: l, granted: true })),
    { type: 'workflow', workflow_id: 31, list_id: 3, name: 'Welcome' },
    { type: 'workflow', workflow_id: 41, list_id: 4, name: 'Welcome' },
  ];
  const days: [number, number, number][] = [
    [-20, 12, 1],
    [-12, 30, 3],
    [-3, 18, 2],
  ];
  for (const [offset, sends, purchases] of days) {
    const at = Date.parse(`${shift(today, offset)}T12:00:00Z`);
    for (let s = 1; s <= sends; s++) {
      const base = { list_id: 3, workflow_id: 31, subscriber_id: s, trigger_id: 1 };
      const id = `${offset}-${s}`;
      records.push({ type: 'send', event_id: `s${id}`, ...base, timestamp: at });
      if (s % 2 === 0)
        records.push({ type: 'open', event_id: `o${id}`, ...base, timestamp: at + 6e5, sent_at: at });
      if (s % 5 === 0)
        records.push({ type: 'click', event_id: `c${id}`, ...base, timestamp: at + 9e5, sent_at: at });
      if (s <= purchases)
        records.push({
          type: 'purchase',
          event_id: `p${id}`,
          ...base,
          timestamp: at + 18e5,
          sent_at: at,
          order_id: `o-${id}`,
          value_ron: (149.9 * s).toFixed(2),
          value_eur: ((149.9 * s) / 5).toFixed(2),
        });
    }
  }
  const res = await fetch(`${base}/ingest`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${TOKEN}` },
    body: records.map((r) => JSON.stringify(r)).join('\n'),
  });
  if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
}

const loaded = (page: Page) =>
  page.waitForFunction(() => document.getElementById('app')?.dataset.state === 'loaded', null, {
    timeout: 60_000,
  });

async function signIn(page: Page, user: number, key: string, hash = ''): Promise<void> {
  await page.goto(`${base}/dashboard/${hash}`);
  await page.fill('#user-id', String(user));
  await page.fill('#api-key', key);
  await page.click('#signin-form button[type=submit]');
  await loaded(page);
}

const shot = async (page: Page, name: string, selector?: string) => {
  const path = join(OUT, `${name}.png`);
  if (selector) await page.locator(selector).screenshot({ path });
  else await page.screenshot({ path });
  console.log(`screenshots: ${path}`);
};

const profile = mkdtempSync(join(tmpdir(), 'mailstats-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  viewport: DESKTOP,
  deviceScaleFactor: 1,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
try {
  await ingestSamples();
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(60_000);

  // Desktop, the demo shop: the first screen, the charts, the per-workflow table.
  await page.goto(`${base}/dashboard/`);
  await shot(page, 'desktop-signin');
  await signIn(page, DEMO.userId, DEMO.apiKey, '#list=1&period=days:30');
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'desktop-overview');
  await shot(page, 'desktop-charts', 'section:has(#charts-h)');
  await shot(page, 'desktop-workflows', 'section:has(#wf-h)');

  // The template preview with the demo order.
  await page.selectOption('#tpl-account', DEMO.accountId);
  await page.selectOption('#tpl-template', 'order-confirmation');
  await page.fill('#tpl-params', JSON.stringify(DEMO_ORDER_PARAMS, null, 2));
  await page.click('#tpl-render');
  await page.locator('#tpl-result').waitFor({ state: 'visible' });
  await page.frameLocator('#tpl-frame').locator('h1').waitFor({ state: 'visible' });
  await shot(page, 'desktop-template', 'section:has(#tpl-h)');

  // Sparse and empty lists.
  await page.click('#sign-out');
  await signIn(page, SPARSE_USER.id, SPARSE_USER.key, '#list=3&period=days:30');
  await shot(page, 'desktop-sparse-charts', 'section:has(#charts-h)');
  await page.selectOption('#list', '4');
  await loaded(page);
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'desktop-empty');

  // Phone: the demo shop's first screen, its cards and the per-workflow table.
  await page.setViewportSize(PHONE);
  await page.click('#sign-out');
  await signIn(page, DEMO.userId, DEMO.apiKey, '#list=1&period=days:30');
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'phone-overview');
  await page.locator('#totals-h').scrollIntoViewIfNeeded();
  await page.evaluate(() => document.getElementById('totals-h')!.scrollIntoView());
  await shot(page, 'phone-totals');
  await page.evaluate(() => document.getElementById('charts-h')!.scrollIntoView());
  await shot(page, 'phone-charts');
  await page.evaluate(() => {
    document.getElementById('wf-h')!.scrollIntoView();
    const scroller = document.querySelector('#wf')!.parentElement!;
    scroller.scrollLeft = 260;
  });
  await shot(page, 'phone-workflows');
  await page.selectOption('#tpl-template', 'order-confirmation');
  await page.click('#tpl-render');
  await page.locator('#tpl-result').waitFor({ state: 'visible' });
  await page.frameLocator('#tpl-frame').locator('h1').waitFor({ state: 'visible' });
  await page.evaluate(() => document.getElementById('tpl-h')!.scrollIntoView());
  await shot(page, 'phone-template');
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
  await service.close();
  rmSync(dir, { recursive: true, force: true });
}
