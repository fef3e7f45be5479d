// Modes: embedded and server (listed in vitest.config.ts SERVER_SUITES): links are rows of the store,
// read by every API process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate } from '../../shared/dates.js';
import { adminCli } from '../support/admin-cli.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * Share links (docs/dashboard.md "Share links"): `admin share add` and share.create make a link; it
 * reads its list's lists/stats/totals/by-workflow answers without a key, equal to the owner's, kept
 * within its workflow set; it reaches nothing else; revoked, expired or unknown it is one 403.
 */
const USER = 5501;
const KEY = 'share-key-0123456789ab';
const LIST = 55;
const OTHER_LIST = 56;
const TZ = 'Europe/Bucharest';
const ADMIN_TOKEN = 'share-admin-token-0123456789abcdef';

let svc: TestService;
const dayBefore = (n: number) => localDate(Date.now() - n * 86_400_000, TZ);

async function owner(operation: string, params: Record<string, unknown>) {
  const res = await fetch(`${svc.url}/api/1.2/rest/${USER}/${KEY}/${operation}.json`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(params),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function shared(token: string, what: string, query = '') {
  const res = await fetch(`${svc.url}/api/share/${token}/${what}${query ? `?${query}` : ''}`);
  return { status: res.status, body: (await res.json()) as any };
}

const cli = (args: string[]) => adminCli([...args, '--url', svc.url!], { ADMIN_TOKEN }, { timeout: 60_000 });
const tokenOf = (url: string) => /#share=([A-Za-z0-9_-]+)/.exec(url)![1]!;

beforeAll(async () => {
  svc = await startTestService({ ADMIN_TOKEN });
  const records: unknown[] = [];
  let n = 0;
  for (let d = 1; d <= 5; d++)
    for (const list_id of [LIST, OTHER_LIST])
      for (const workflow_id of [1, 2, 3])
        for (let s = 1; s <= 4; s++) {
          const base = {
            list_id,
            workflow_id,
            subscriber_id: s + workflow_id,
            timestamp: Date.parse(`${dayBefore(d)}T09:00:00Z`),
          };
          records.push({ ...base, type: 'send', event_id: `s-${n++}` });
          if (s % 2 === 0) records.push({ ...base, type: 'open', event_id: `o-${n++}` });
          if (s === 4)
            records.push({
              ...base,
              type: 'purchase',
              event_id: `p-${n++}`,
              order_id: `o${n}`,
              value_ron: '10.005',
              value_eur: '2',
            });
        }
  const res = await svc.ingest([
    ...tenant({
      userId: USER,
      apiKey: KEY,
      lists: [
        { list_id: LIST, timezone: TZ },
        { list_id: OTHER_LIST, timezone: TZ },
      ],
    }),
    { type: 'workflow', workflow_id: 1, list_id: LIST, name: 'Welcome' },
    ...records,
  ]);
  expect(res.body.rejected).toEqual([]);
}, 180_000);

afterAll(async () => {
  await svc?.stop();
});

describe('share links', () => {
  let token = '';
  let id = '';

  it('admin share add prints a /dashboard/#share= URL; the link reads its list as the owner does', async () => {
    const run = await cli(['share', 'add', '--list', String(LIST), '--expires', '7d']);
    expect(run.err + run.out).not.toContain(KEY);
    expect(run.code, run.err).toBe(0);
    expect(run.out.trim()).toMatch(new RegExp(`^${svc.url}/dashboard/#share=[A-Za-z0-9_-]{43}$`));
    token = tokenOf(run.out);
    id = /share link (\w+) saved/.exec(run.err)![1]!;

    const lists = await shared(token, 'lists');
    expect(lists).toEqual({
      status: 200,
      body: [{ list_id: String(LIST), list_name: `list ${LIST}`, timezone: TZ, currency: 'RON' }],
    });
    for (const [what, operation] of [
      ['stats', 'automation.stats'],
      ['totals', 'automation.statsTotals'],
      ['by-workflow', 'automation.statsByWorkflow'],
    ] as const) {
      const viaLink = await shared(token, what, 'days=30&workflow_ids=1,2');
      expect(viaLink.status).toBe(200);
      expect(viaLink.body).toEqual(
        (await owner(operation, { list_id: LIST, days: 30, workflow_ids: [1, 2] })).body,
      );
    }
    // list_id in the query changes nothing: the link fixes the list.
    const other = await shared(token, 'totals', `list_id=${OTHER_LIST}&days=30`);
    expect(other.body.list_id).toBe(String(LIST));
    // The same checks on params as the operations.
    expect((await shared(token, 'stats', 'days=99999')).body).toMatchObject({ err: true, code: 406 });
  }, 300_000);

  it('admin share list shows the link without its token; a link with a workflow set stays within it', async () => {
    const listing = await cli(['share', 'list']);
    expect(listing.code, listing.err).toBe(0);
    expect(listing.out).toContain(id);
    expect(listing.out).not.toContain(token);

    const run = await cli(['share', 'add', '--list', String(LIST), '--workflows', '1,3']);
    const narrow = tokenOf(run.out);
    const rows = await shared(narrow, 'by-workflow', 'days=30');
    expect(rows.body.map((r: any) => r.workflow_id)).toEqual(['1', '3']);
    const asked = await shared(narrow, 'totals', 'days=30&workflow_ids=2,3');
    expect(asked.body).toEqual(
      (await owner('automation.statsTotals', { list_id: LIST, days: 30, workflow_ids: [3] })).body,
    );
    const all = await shared(narrow, 'stats', 'days=30');
    expect(all.body).toEqual(
      (await owner('automation.stats', { list_id: LIST, days: 30, workflow_ids: [1, 3] })).body,
    );
  }, 300_000);

  it('the link reaches nothing else: no API operation, no other path', async () => {
    for (const path of [
      `/api/share/${token}/render`,
      `/api/share/${token}/../${token}/templates`,
      `/api/1.2/rest/${USER}/${token}/list.all.json`,
      `/api/1.2/rest/${USER}/${token}/transactional.templateRender.json?list_id=${LIST}&template_id=x`,
    ]) {
      const res = await fetch(`${svc.url}${path}`);
      expect(res.status, path).not.toBe(200);
    }
  }, 300_000);

  it('revoked, expired and unknown links: one 403 answer', async () => {
    const expected = {
      err: true,
      code: 101,
      message: 'This share link is not valid (unknown, revoked or expired)',
    };
    expect(await shared('A'.repeat(43), 'totals', 'days=30')).toEqual({ status: 403, body: expected });
    expect(await shared('short', 'lists')).toEqual({ status: 403, body: expected });
    const revoke = await cli(['share', 'revoke', id]);
    expect(revoke.code, revoke.err).toBe(0);
    expect(await shared(token, 'lists')).toEqual({ status: 403, body: expected });
    expect(await shared(token, 'stats', 'days=30')).toEqual({ status: 403, body: expected });
    // Expired: a link whose expiry has passed (written as the store holds it).
    await svc.db.command(
      `INSERT INTO share_links (id, token_sha256, list_id, workflow_ids, created_at, expires_at, revoked, version)
       SELECT 'old', {digest:String}, ${LIST}, [], now64(3) - 100, now64(3) - 1, 0, 1`,
      { digest: (await import('node:crypto')).createHash('sha256').update('B'.repeat(43)).digest('hex') },
    );
    expect(await shared('B'.repeat(43), 'totals', 'days=30')).toEqual({ status: 403, body: expected });
  }, 300_000);

  it('share.create: the owner makes a link from the dashboard; only for a list it may read', async () => {
    const made = await owner('share.create', { list_id: LIST, workflow_ids: [2], expires_days: 3 });
    expect(made.status).toBe(200);
    expect(made.body).toEqual({
      url: expect.stringMatching(/^\/dashboard\/#share=[A-Za-z0-9_-]{43}$/),
      id: expect.any(String),
      expires_at: expect.any(String),
    });
    expect(Date.parse(made.body.expires_at) - Date.now()).toBeGreaterThan(3 * 86_400_000 - 120_000);
    const rows = await shared(tokenOf(made.body.url), 'by-workflow', 'days=30');
    expect(rows.body.map((r: any) => r.workflow_id)).toEqual(['2']);
    expect((await owner('share.create', { list_id: 999 })).body).toMatchObject({ code: 101 });
    const wrongKey = await fetch(
      `${svc.url}/api/1.2/rest/${USER}/wrong-key-0000000000/share.create.json?list_id=${LIST}`,
    );
    expect(wrongKey.status).toBe(403);
  }, 300_000);
});
