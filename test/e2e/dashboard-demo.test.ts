import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO } from '../../ingest/demo-seed.js';
import { adminCli } from '../support/admin-cli.js';
import { buildDashboard, launchBrowser, loaded, signInAs, type Browser } from '../support/browser.js';
import { startTestService, type TestService } from '../support/service.js';
import { startupOutput } from '../support/startup-output.js';

/**
 * Issue 33, point 5: following the README from the demo to data of one's own. The README's own steps
 * (its admin commands and its NDJSON, read from README.md) are run against a store that holds the
 * seeded demo: the demo's removal is announced (CLI and log), the banner of the next start no longer
 * prints its key, signing in with that key says why it is refused, and the path ends in a chart of the
 * user's own data.
 */
const README = readFileSync(resolve(import.meta.dirname, '../../README.md'), 'utf8');
const section = (() => {
  const start = README.indexOf('## Your own data');
  expect(start, 'README.md has a "Your own data" section').toBeGreaterThan(0);
  return README.slice(start, README.indexOf('\n## ', start + 3));
})();

/** `npm run admin -- list add --id 3 --name "Shop"` → ['list', 'add', '--id', '3', '--name', 'Shop']. */
function adminCommands(): string[][] {
  return [...section.matchAll(/^\s*npm run admin -- (.+?)(?:\s+#.*)?$/gm)].map((m) =>
    [...m[1]!.matchAll(/"([^"]*)"|(\S+)/g)].map((a) => a[1] ?? a[2]!),
  );
}

/** The README's NDJSON for POST /ingest, with `$NOW` as the shell would expand it. */
function readmeRecords(now: number): string {
  const block = /<<NDJSON\n([\s\S]*?)\n\s*NDJSON\n/.exec(section)?.[1];
  expect(block, "the section's NDJSON heredoc").toBeDefined();
  // The block is indented in the README's numbered list: the shell would get it without that.
  return block!
    .split('\n')
    .map((l) => l.trim())
    .join('\n')
    .replaceAll('$NOW', String(now));
}

let dir: string;
let service: TestService | undefined;
let browser: Browser;
const logLines: { msg: string }[] = [];

beforeAll(async () => {
  buildDashboard();
  dir = mkdtempSync(join(tmpdir(), 'mailstats-demo-readme-'));
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the README from the demo to a chart of one’s own data', () => {
  let ownKey: string;

  it('a first start loads the demo and prints its key', async () => {
    const out = await startupOutput({ DATA_DIR: dir, SEED_DEMO: 'true' }, /try: .*\n/);
    expect(out).toContain(`api_key ${DEMO.apiKey}`);
    expect(out).toMatch(/demo tenant: +user_id 1001/);
  }, 180_000);

  it('the README’s admin steps: the CLI says the demo was removed, the log says why', async () => {
    const stream = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n').filter(Boolean)) logLines.push(JSON.parse(l));
        done();
      },
    });
    service = await startTestService(
      { DATA_DIR: dir, SEED_DEMO: 'true' },
      { log: pino({ level: 'info' }, stream) as never },
    );
    expect(service.demoPresent).toBe(true);
    const before = await service.call(`/api/1.2/rest/${DEMO.userId}/${DEMO.apiKey}/list.all.json`);
    expect(before.status).toBe(200);
    const commands = adminCommands();
    expect(commands[0]?.slice(0, 2)).toEqual(['list', 'add']);
    // The admin token from DATA_DIR (as an operator's CLI finds it); the test service's own ingest token.
    const env = { MAILSTATS_URL: service.url!, DATA_DIR: dir, INGEST_TOKEN: service.ingestToken };
    for (const args of commands) {
      const run = await adminCli(args, env, { timeout: 60_000 });
      expect(run.code, `${args.join(' ')}: ${run.err}`).toBe(0);
      if (args[0] === 'list') expect(run.out).toMatch(/removed it, and its published key now answers 403/);
      const key = /api key \(shown once, stored only as its SHA-256\): ([0-9a-f]{40})$/m.exec(run.out)?.[1];
      if (key) ownKey = key;
    }
    expect(ownKey).toBeDefined();
    expect(logLines.some((l) => l.msg.startsWith('demo tenant removed: the first record of your own'))).toBe(
      true,
    );
    const after = await service.call(`/api/1.2/rest/${DEMO.userId}/${DEMO.apiKey}/list.all.json`);
    expect(after.status).toBe(403);
  }, 180_000);

  it('the README’s records reach a chart of the user’s own list in the dashboard', async () => {
    const now = Date.now();
    const res = await service!.ingest(readmeRecords(now));
    expect(res.status).toBe(200);
    expect(res.body.accepted).toBeGreaterThan(0);
    const lists = (await service!.call(`/api/1.2/rest/7/${ownKey}/list.all.json`)).body;
    expect(lists.map((l: any) => l.list_id)).toEqual(['3']);
    const stats = (await service!.call(`/api/1.2/rest/7/${ownKey}/automation.stats.json?list_id=3&days=7`))
      .body;
    expect(stats.length).toBe(1);
    expect(stats[0].sends_total).toBeGreaterThan(0);

    browser = await launchBrowser({ width: 1440, height: 900 });
    const page = browser.page;
    await page.goto(`${service!.url}/dashboard/`);
    // The demo's key, refused: the page says why.
    await signInAs(page, DEMO.userId, DEMO.apiKey);
    await expect.poll(() => page.locator('#signin-error').innerText()).toContain('demo tenant');
    await signInAs(page, 7, ownKey);
    await loaded(page);
    // The records are today's: the last 30 days end yesterday, and the page says where they are.
    expect(await page.locator('#empty-text').innerText()).toContain('Today has activity already');
    await page.check('#include-today');
    await loaded(page);
    const plotted = JSON.parse((await page.locator('#chart-activity').getAttribute('data-series'))!);
    const i = plotted.x.indexOf(stats[0].date);
    expect(i).toBeGreaterThanOrEqual(0);
    expect(plotted.series['Sends (unique)'][i]).toBe(stats[0].sends_unique);
    expect(await page.locator('[data-kpi="revenue-ron"] .kpi-value').innerText()).toBe(
      stats[0].formatted_revenue_ron,
    );
  }, 180_000);

  it('the next start prints no demo key, and says why', async () => {
    await service?.stop();
    service = undefined;
    const out = await startupOutput(
      { DATA_DIR: dir, SEED_DEMO: 'true' },
      /docs: .*\n[\s\S]*demo tenant: .*\n/,
    );
    expect(out).not.toContain(DEMO.apiKey);
    expect(out).toMatch(/demo tenant: +none — this store holds records of your own/);
  }, 180_000);
});
