/**
 * `npm run screenshots`: pictures of the dashboard's main views for docs/dashboard.md, written to
 * docs/screenshots/ at desktop (1440×900) and phone (390×844) size. Builds the page, starts the service
 * on a free port with a temp DATA_DIR and the demo tenant (plus a second user whose lists have activity
 * on three days only, none at all, and 50 workflows over two years), and drives Debian's Chromium (/usr/bin/chromium) with
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

/** Workflow names as shops write them: some short, some long enough to be cut in the table. */
const BIG_NAMES = [
  'Welcome',
  'Abandoned cart — second reminder with a discount code for returning customers',
  'Post-purchase review request',
  'Win-back after 90 days',
  'Birthday',
];

/** List 5: 50 workflows with activity over the last 700 days (the 690-day view and the big table). */
function bigListRecords(): unknown[] {
  const records: unknown[] = [
    { type: 'list', list_id: 5, name: 'Big Shop', timezone: 'Europe/Bucharest', currency: 'RON' },
    { type: 'list_access', user_id: SPARSE_USER.id, list_id: 5, granted: true },
  ];
  for (let w = 1; w <= 50; w++) {
    const id = 500 + w;
    records.push({ type: 'workflow', workflow_id: id, list_id: 5, name: `${BIG_NAMES[w % 5]} ${w}` });
    for (let offset = 0; offset < 700; offset++) {
      if ((offset + w) % 6 !== 0) continue;
      const at = Date.parse(`${shift(today, -offset)}T12:00:00Z`);
      // A season: more sends in November and December.
      const month = Number(shift(today, -offset).slice(5, 7));
      const sends = 2 + (w % 4) + (month >= 11 ? 3 : 0);
      for (let s = 1; s <= sends; s++) {
        const base = {
          list_id: 5,
          workflow_id: id,
          subscriber_id: (w * 7 + s * 13 + offset) % 900,
          trigger_id: 1 + (w % 3),
        };
        const key = `b${w}-${offset}-${s}`;
        records.push({ type: 'send', event_id: `s${key}`, ...base, timestamp: at });
        if ((s + offset) % 2 === 0)
          records.push({ type: 'open', event_id: `o${key}`, ...base, timestamp: at + 6e5, sent_at: at });
        if ((s + offset) % 7 === 0)
          records.push({ type: 'click', event_id: `c${key}`, ...base, timestamp: at + 9e5, sent_at: at });
        if ((s + offset + w) % 23 === 0)
          records.push({
            type: 'purchase',
            event_id: `p${key}`,
            ...base,
            timestamp: at + 18e5,
            sent_at: at,
            order_id: `o-${key}`,
            value_ron: (89.9 + ((w * 31 + offset) % 400)).toFixed(2),
            value_eur: ((89.9 + ((w * 31 + offset) % 400)) / 5).toFixed(4),
          });
      }
    }
  }
  return records;
}

/** A second user: list 3 with sends on three days only, list 4 with no activity, list 5 with 50 workflows. */
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
  records.push(...bigListRecords());
  // In bodies well under POST /ingest's 10 MiB.
  for (let i = 0; i < records.length; i += 5000) {
    const res = await fetch(`${base}/ingest`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson', authorization: `Bearer ${TOKEN}` },
      body: records
        .slice(i, i + 5000)
        .map((r) => JSON.stringify(r))
        .join('\n'),
    });
    if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
  }
}

const loaded = (page: Page) =>
  page.waitForFunction(() => document.getElementById('app')?.dataset.state === 'loaded', null, {
    // A loaded machine takes its time over 690 days of 50 workflows.
    timeout: 300_000,
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
  page.setDefaultTimeout(300_000);

  // Desktop, the demo shop: the first screen, the charts, the per-workflow table.
  await page.goto(`${base}/dashboard/`);
  await shot(page, 'desktop-signin');
  await signIn(page, DEMO.userId, DEMO.apiKey, '#list=1&period=days:30');
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'desktop-overview');
  await shot(page, 'desktop-charts', 'section:has(#charts-h)');
  await shot(page, 'desktop-workflows', 'section:has(#wf-h)');
  await shot(page, 'desktop-workflow-bars', 'figure:has(#wf-bars)');
  await shot(page, 'desktop-needs-a-look', '#wf-health');

  // A share link made on the page (points per week), and what whoever opens it sees, on both widths.
  await page.selectOption('#chart-group', 'week');
  await page.click('#share-open');
  await page.fill('#share-days', '7');
  await page.click('#share-create');
  await page.locator('#share-result').waitFor({ state: 'visible' });
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'desktop-share', '#share-panel');
  const shareUrl = await page.locator('#share-url').inputValue();
  await page.click('#share-open');
  await page.selectOption('#chart-group', 'day');
  const shared = await context.newPage();
  await shared.goto(shareUrl);
  await loaded(shared);
  await shot(shared, 'desktop-shared');
  await shared.setViewportSize(PHONE);
  await shared.evaluate(() => window.scrollTo(0, 0));
  await shot(shared, 'phone-shared');
  await shared.close();

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

  // 50 workflows: the table (names cut, the name column in view) and 690 days of charts.
  const long = `#list=5&period=custom&from=${shift(today, -689)}&to=${today}`;
  await page.click('#sign-out');
  await signIn(page, SPARSE_USER.id, SPARSE_USER.key, '#list=5&period=days:30');
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'desktop-50-workflows-overview');
  await shot(page, 'desktop-50-workflows', 'section:has(#wf-h)');
  await page.evaluate(() => {
    const scroller = document.querySelector('#wf')!.parentElement!;
    scroller.scrollLeft = scroller.scrollWidth;
  });
  await shot(page, 'desktop-50-workflows-scrolled', 'section:has(#wf-h)');
  await page.click('#sign-out');
  await signIn(page, SPARSE_USER.id, SPARSE_USER.key, long);
  await shot(page, 'desktop-690-days', 'section:has(#charts-h)');

  // Phone: the demo shop's first screen, its cards and the per-workflow table.
  await page.setViewportSize(PHONE);
  await page.click('#sign-out');
  await signIn(page, DEMO.userId, DEMO.apiKey, '#list=1&period=days:30');
  await page.evaluate(() => window.scrollTo(0, 0));
  await shot(page, 'phone-overview');
  // The filters folded into one line open with "Change".
  await page.click('#filters-toggle');
  await shot(page, 'phone-filters');
  await page.click('#filters-toggle');
  await page.evaluate(() => document.getElementById('wf-bars')!.closest('figure')!.scrollIntoView());
  await shot(page, 'phone-workflow-bars');
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

  // Phone: the sparse list, the 50 workflows, 690 days.
  await page.click('#sign-out');
  await signIn(page, SPARSE_USER.id, SPARSE_USER.key, '#list=3&period=days:30');
  await page.evaluate(() => document.getElementById('charts-h')!.scrollIntoView());
  await shot(page, 'phone-sparse-charts');
  await page.click('#sign-out');
  await signIn(page, SPARSE_USER.id, SPARSE_USER.key, '#list=5&period=days:30');
  await page.evaluate(() => document.getElementById('wf-h')!.scrollIntoView());
  await shot(page, 'phone-50-workflows');
  await page.click('#sign-out');
  await signIn(page, SPARSE_USER.id, SPARSE_USER.key, long);
  await page.evaluate(() => document.getElementById('charts-h')!.scrollIntoView());
  await shot(page, 'phone-690-days');
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
  await service.close();
  rmSync(dir, { recursive: true, force: true });
}
