// Modes: embedded and server (listed in vitest.config.ts SERVER_SUITES). Both: a report arrives once per
// period, also after a restart on the same store. Server mode also: two processes on one database check
// at the same moment and one e-mail arrives (embedded, one process owns a DATA_DIR: there is no second).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate } from '../../shared/dates.js';
import { startMailpit, type Mailpit } from '../support/mailpit.js';
import { serverEnv, startTestService, tenant } from '../support/service.js';

const USER = 5701;
const KEY = 'report-key-0123456789ab';
const LIST = 57;
const TZ = 'Europe/Bucharest';
const ADMIN_TOKEN = 'report-admin-token-0123456789abcdef';
const server = Boolean(process.env.CLICKHOUSE_URL);

let mailpit: Mailpit;
const dataDir = mkdtempSync(join(tmpdir(), 'mailstats-reports-'));
/** One store for every service of this file: the embedded DATA_DIR, or one server database. */
const env = () => ({
  ADMIN_TOKEN,
  SMTP_URL: mailpit.smtpUrl,
  REPORT_FROM: 'mailstats <reports@example.com>',
  // Checks are made by the test (tick), not by the timer.
  REPORT_CHECK_MS: '86400000',
  ...(server ? serverEnv(`reports-${process.pid}`) : { DATA_DIR: dataDir }),
});
const dayBefore = (n: number) => localDate(Date.now() - n * 86_400_000, TZ);

beforeAll(async () => {
  mailpit = await startMailpit();
  const svc = await startTestService(env());
  try {
    const records: unknown[] = [];
    let n = 0;
    for (let d = 1; d <= 40; d++)
      for (const workflow_id of [1, 2, 3, 4])
        for (let s = 1; s <= 5; s++) {
          const base = {
            list_id: LIST,
            workflow_id,
            subscriber_id: s * workflow_id,
            timestamp: Date.parse(`${dayBefore(d)}T09:00:00Z`),
          };
          records.push({ ...base, type: 'send', event_id: `s-${n++}` });
          if ((s + d) % 2 === 0) records.push({ ...base, type: 'open', event_id: `o-${n++}` });
          if (s === workflow_id)
            records.push({
              ...base,
              type: 'purchase',
              event_id: `p-${n++}`,
              order_id: `o${n}`,
              value_ron: '25.5',
              value_eur: '5.1',
            });
          if (s === 5 && d % 3 === 0) records.push({ ...base, type: 'bounce', event_id: `b-${n++}` });
        }
    const res = await svc.ingest([
      ...tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST, timezone: TZ }] }),
      { type: 'workflow', workflow_id: 1, list_id: LIST, name: 'Welcome' },
      ...records,
    ]);
    expect(res.body.rejected).toEqual([]);
    const add = await fetch(`${svc.url}/admin/report`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ list_id: LIST, to: ['marketer@example.com'], every: 'monday' }),
    });
    expect(add.status).toBe(200);
  } finally {
    await svc.stop();
  }
}, 300_000);

afterAll(async () => {
  await mailpit?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('scheduled e-mail reports', () => {
  it('the last week arrives once: HTML, text and a CSV with the headline, workflows and "Needs a look"', async () => {
    const svc = await startTestService(env());
    try {
      expect(await svc.reports!.tick()).toBe(1);
      expect(await svc.reports!.tick()).toBe(0);
    } finally {
      await svc.stop();
    }
    const messages = await mailpit.messages();
    expect(messages).toHaveLength(1);
    const [m] = messages;
    expect(m!.To.map((t) => t.Address)).toEqual(['marketer@example.com']);
    expect(m!.Subject).toContain(`list ${LIST}:`);
    const full = await mailpit.message(m!.ID);
    expect(full.Text).toContain('Recipients:');
    expect(full.Text).toContain('Revenue per recipient (RON)');
    expect(full.Text).toContain('Top workflows');
    expect(full.Text).toContain('Needs a look:');
    expect(full.Text).toMatch(/Bounces at [\d,]+ % of sends/);
    expect(full.HTML).toContain('<h2>Needs a look</h2>');
    expect(full.Attachments.map((a) => a.FileName)).toEqual([
      expect.stringMatching(/^report-57-week-\d{4}-\d{2}-\d{2}\.csv$/),
    ]);
    const csv = await mailpit.part(m!.ID, full.Attachments[0]!.PartID);
    expect(csv).toContain('measure;this period;previous period;change');
    expect(csv).toContain('1;Welcome;');
  }, 300_000);

  it('after a restart on the same store: not sent again', async () => {
    const svc = await startTestService(env());
    try {
      expect(await svc.reports!.tick()).toBe(0);
    } finally {
      await svc.stop();
    }
    expect(await mailpit.messages()).toHaveLength(1);
  }, 300_000);

  if (server)
    it('server mode: two processes checking together send one e-mail for a period', async () => {
      const [a, b] = [await startTestService(env()), await startTestService(env())];
      try {
        const add = await fetch(`${a.url}/admin/report`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ list_id: LIST, to: ['second@example.com'], every: 'month' }),
        });
        expect(add.status).toBe(200);
        // Both at once (a second tick of one process while its first runs would share that check: so, rounds).
        const first = await Promise.all([a.reports!.tick(), b.reports!.tick()]);
        const again = await Promise.all([a.reports!.tick(), b.reports!.tick()]);
        const sent = [...first, ...again];
        expect(sent.reduce((x, y) => x + y, 0)).toBe(1);
      } finally {
        await Promise.all([a.stop(), b.stop()]);
      }
      const second = (await mailpit.messages()).filter((m) =>
        m.To.some((t) => t.Address === 'second@example.com'),
      );
      expect(second).toHaveLength(1);
    }, 300_000);
});
