// Modes: embedded and server
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestService, tenant, type TestService } from '../support/service.js';

/** automation.workflows and transactional.templates (the dashboard's names for what it shows). */
let service: TestService;
const A = { userId: 41, apiKey: 'ops-key-a' };
const B = { userId: 42, apiKey: 'ops-key-b' };
const path = (who: { userId: number; apiKey: string }, op: string) =>
  `/api/1.2/rest/${who.userId}/${who.apiKey}/${op}.json`;
const post = (who: { userId: number; apiKey: string }, op: string, body: unknown) =>
  service.call(path(who, op), {
    method: 'POST',
    body: JSON.stringify(body),
    contentType: 'application/json',
  });

beforeAll(async () => {
  service = await startTestService();
  const res = await service.ingest([
    ...tenant({ ...A, lists: [{ list_id: 51 }, { list_id: 52 }] }),
    ...tenant({ ...B, lists: [{ list_id: 53 }] }),
    { type: 'workflow', workflow_id: 12, list_id: 51, name: 'Cart reminder' },
    { type: 'workflow', workflow_id: 3, list_id: 51, name: 'Welcome' },
    { type: 'workflow', workflow_id: 7, list_id: 51, name: 'Old name', version: 1 },
    { type: 'workflow', workflow_id: 7, list_id: 52, name: 'Moved away', version: 2 },
    { type: 'workflow', workflow_id: 9, list_id: 53, name: 'Not yours' },
    { type: 'smtp_account', account_id: 'acc-b', list_id: 51, active: false },
    { type: 'smtp_account', account_id: 'acc-a', list_id: 51, active: true, is_default: true },
    { type: 'smtp_account', account_id: 'acc-x', list_id: 53, active: true },
    { type: 'template', template_id: 'receipt', account_id: 'acc-a', content: 'r', content_type: 'text' },
    { type: 'template', template_id: 'alpha', account_id: 'acc-a', content: '<p>a</p>' },
    { type: 'template', template_id: 'gone', account_id: 'acc-a', content: 'g', version: 1 },
    { type: 'template', template_id: 'gone', account_id: 'acc-a', content: 'g', deleted: true, version: 2 },
    { type: 'template', template_id: 'other', account_id: 'acc-x', content: 'x' },
  ]);
  expect(res.body.rejected).toEqual([]);
}, 180_000);
afterAll(() => service?.stop());

describe('automation.workflows', () => {
  it("lists the list's workflows by id, at their latest version; one moved away is not listed", async () => {
    const res = await post(A, 'automation.workflows', { list_id: 51 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { workflow_id: 3, name: 'Welcome' },
      { workflow_id: 12, name: 'Cart reminder' },
    ]);
    const moved = await service.call(`${path(A, 'automation.workflows')}?list_id=52`);
    expect(moved.body).toEqual([{ workflow_id: 7, name: 'Moved away' }]);
  });

  it('407, 406, then 101 for a list without grant; a wrong key is 101 first', async () => {
    expect((await post(A, 'automation.workflows', {})).body).toEqual({
      err: true,
      message: 'Missing required param list_id',
      code: 407,
    });
    expect((await post(A, 'automation.workflows', { list_id: 'x' })).body.code).toBe(406);
    for (const [who, list] of [
      [A, 53],
      [A, 99],
    ] as const) {
      const res = await post(who, 'automation.workflows', { list_id: list });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ err: true, message: `Not allowed for list_id = ${list}`, code: 101 });
    }
    // Issue 19: a wrong key is answered before the body (and its list_id) is read, even with no list_id.
    for (const body of [{ list_id: 51 }, {}]) {
      const res = await post({ ...A, apiKey: 'wrong' }, 'automation.workflows', body);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ err: true, message: 'Not allowed for this user_id and api_key', code: 101 });
    }
  });
});

describe('transactional.templates', () => {
  it("lists the list's accounts and their live templates", async () => {
    const res = await post(A, 'transactional.templates', { list_id: 51 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        account_id: 'acc-a',
        active: true,
        is_default: true,
        templates: [
          { template_id: 'alpha', content_type: 'html' },
          { template_id: 'receipt', content_type: 'text' },
        ],
      },
      { account_id: 'acc-b', active: false, is_default: false, templates: [] },
    ]);
    expect((await post(A, 'transactional.templates', { list_id: 52 })).body).toEqual([]);
  });

  it('101 for another user’s list, and nothing of it leaks', async () => {
    const res = await post(A, 'transactional.templates', { list_id: 53 });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ err: true, message: 'Not allowed for list_id = 53', code: 101 });
  });
});

describe('while the catalog cannot be polled', () => {
  let fresh: TestService;
  beforeAll(async () => {
    // Embedded, a process holds one data directory: the file's service serves (it has no freshness bound).
    fresh =
      service.db.mode === 'embedded'
        ? service
        : await startTestService({ CATALOG_POLL_MS: '50', CATALOG_FRESHNESS_MS: '300' });
    const res = await fresh.ingest(tenant({ userId: 43, apiKey: 'ops-key-c', lists: [{ list_id: 54 }] }));
    expect(res.body.rejected).toEqual([]);
  }, 180_000);
  afterAll(() => (fresh === service ? undefined : fresh?.stop()));

  const workflows = () =>
    fetch(`${fresh.url}/api/1.2/rest/43/ops-key-c/automation.workflows.json?list_id=54`).then(async (r) => ({
      status: r.status,
      retryAfter: r.headers.get('retry-after'),
      body: await r.json(),
    }));

  it('server: held grants and keys are served only while the poll is fresh, then 503 with Retry-After; embedded: served', async () => {
    expect((await workflows()).status).toBe(200); // held now
    let failing = true;
    // The poll's statement (the catalog table's parts) fails; every other statement still works.
    fresh.db.faultInjector = async (what) => {
      if (failing && /FROM system\.parts/.test(what))
        throw new Error('Code: 159. DB::Exception: Timeout exceeded (simulated)');
    };
    try {
      if (fresh.db.mode === 'embedded') {
        // One process owns an embedded store: what it holds is exact, nothing to poll for.
        await new Promise((r) => setTimeout(r, 1_000));
        expect((await workflows()).status).toBe(200);
        return;
      }
      // Before: 200 from what was held, for as long as the poll kept failing.
      await vi.waitFor(
        async () => {
          const res = await workflows();
          expect(res.status, JSON.stringify(res.body)).toBe(503);
          expect(res.body).toEqual({
            err: true,
            message: 'Service unavailable: the catalog could not be read recently',
            code: 503,
          });
          expect(Number(res.retryAfter)).toBeGreaterThanOrEqual(1);
        },
        { timeout: 15_000, interval: 100 },
      );
      failing = false;
      await vi.waitFor(async () => expect((await workflows()).status).toBe(200), {
        timeout: 15_000,
        interval: 100,
      });
    } finally {
      fresh.db.faultInjector = undefined;
    }
  });
});
