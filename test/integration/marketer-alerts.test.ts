// Modes: embedded only — the demo tenant is seeded only into an embedded store (docs/records.md); the
// thresholds' storage is the same table in both modes (marketer-share.test.ts covers server mode's admin path).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO } from '../../ingest/demo-seed.js';
import { adminCli } from '../support/admin-cli.js';
import { startTestService, type TestService } from '../support/service.js';

/**
 * Alerts in the statsTotals answer (docs/dashboard.md "Alerts"): the demo's bounce rate (2.06 % of sends
 * over the last 30 days, above the 2 % default) is flagged; `admin alerts set --list 1 --bounce 3` makes
 * that list's threshold 3 %, and the alert goes.
 */
const ADMIN_TOKEN = 'alerts-admin-token-0123456789abcdef';
let svc: TestService;

async function totals(params: Record<string, unknown>) {
  const res = await fetch(
    `${svc.url}/api/1.2/rest/${DEMO.userId}/${DEMO.apiKey}/automation.statsTotals.json`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(params),
    },
  );
  return (await res.json()) as any;
}

beforeAll(async () => {
  svc = await startTestService({ SEED_DEMO: 'true', ADMIN_TOKEN });
}, 300_000);
afterAll(async () => {
  await svc?.stop();
});

describe('alerts', () => {
  it("the demo's bounce rate is flagged, with the value the day rows give", async () => {
    const body = await totals({ list_id: 1, days: 30 });
    const days = await (
      await fetch(
        `${svc.url}/api/1.2/rest/${DEMO.userId}/${DEMO.apiKey}/automation.stats.json?list_id=1&days=30`,
      )
    ).json();
    const sum = (f: string) => (days as any[]).reduce((s, d) => s + d[f], 0);
    const rate = Math.round((sum('bounce_total') / sum('sends_total')) * 10_000) / 100;
    expect(rate).toBeGreaterThan(2);
    const bounce = body.alerts.find((a: any) => a.kind === 'bounce');
    expect(bounce).toEqual({
      kind: 'bounce',
      message: expect.stringContaining('Bounces at'),
      value: rate,
      threshold: 2,
    });
  });

  it('admin alerts set: a list threshold of its own, shown by alerts show; other lists keep the defaults', async () => {
    const set = await adminCli(['alerts', 'set', '--list', '1', '--bounce', '3', '--url', svc.url!], {
      ADMIN_TOKEN,
    });
    expect(set.code, set.err).toBe(0);
    expect(set.out).toContain('"bounce":3');
    await new Promise((r) => setTimeout(r, 1_100)); // the thresholds are read at most once a second
    const body = await totals({ list_id: 1, days: 30 });
    expect(body.alerts.find((a: any) => a.kind === 'bounce')).toBeUndefined();
    const show = await adminCli(['alerts', 'show', '--list', '1', '--url', svc.url!], { ADMIN_TOKEN });
    expect(JSON.parse(show.out)).toMatchObject({ bounce: 3, spam: 0.1 });
    const other = await adminCli(['alerts', 'show', '--list', '2', '--url', svc.url!], { ADMIN_TOKEN });
    expect(JSON.parse(other.out)).toMatchObject({ bounce: 2 });
    const bad = await adminCli(['alerts', 'set', '--list', '1', '--bounce', 'x', '--url', svc.url!], {
      ADMIN_TOKEN,
    });
    expect(bad.code).toBe(2);
  }, 300_000);
});
