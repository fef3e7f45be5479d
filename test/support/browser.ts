import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium driven by playwright-core, for the dashboard's browser tests and screenshots. */
export const CHROMIUM = '/usr/bin/chromium';

/** Chromium is a test requirement: installed when we are root, else a loud failure naming the command. */
export function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  if (process.getuid?.() === 0) {
    execFileSync(
      'sh',
      [
        '-c',
        'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium',
      ],
      { stdio: 'inherit' },
    );
    if (existsSync(CHROMIUM)) return;
  }
  throw new Error(
    `The dashboard's browser tests need Chromium at ${CHROMIUM}: install it with \`apt-get install -y chromium\``,
  );
}

/** The page under test is built from the current sources (the same build `npm install` runs). */
export const buildDashboard = () =>
  execFileSync(process.execPath, ['dashboard/build.mjs'], { stdio: 'inherit' });

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

export async function launchBrowser(viewport = { width: 1280, height: 900 }): Promise<Browser> {
  ensureChromium();
  const profile = mkdtempSync(join(tmpdir(), 'mailstats-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    acceptDownloads: true,
    viewport,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(Number(process.env.PW_TIMEOUT ?? 60_000));
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Waits until the dashboard shows a finished load (per-workflow table included). */
export async function loaded(page: Page): Promise<void> {
  await page.waitForFunction(() => document.getElementById('app')?.dataset.state === 'loaded', null, {
    timeout: 60_000,
  });
}

/** Signs in with the form (signing out first when signed in). */
export async function signInAs(page: Page, userId: number | string, apiKey: string): Promise<void> {
  if (await page.locator('#sign-out').isVisible()) await page.click('#sign-out');
  await page.fill('#user-id', String(userId));
  await page.fill('#api-key', apiKey);
  await page.click('#signin-form button[type=submit]');
}

export const todayIn = (tz: string) =>
  new Intl.DateTimeFormat('en-CA', {
    timeZone: tz,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).format(new Date());

export const shift = (date: string, days: number) =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

/** WCAG contrast ratio of two CSS colours given as rgb()/rgba() or #rrggbb. */
export function contrast(a: string, b: string): number {
  const rgb = (c: string): number[] => {
    const hex = /^#([0-9a-f]{6})$/i.exec(c.trim());
    if (hex) return [0, 2, 4].map((i) => parseInt(hex[1]!.slice(i, i + 2), 16));
    const m = /rgba?\(([^)]+)\)/.exec(c);
    if (!m) throw new Error(`not a colour: ${c}`);
    return m[1]!
      .split(/[ ,/]+/)
      .slice(0, 3)
      .map(Number);
  };
  const lum = (c: string) => {
    const [r, g, b] = rgb(c).map((v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  };
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x! + 0.05) / (y! + 0.05);
}
