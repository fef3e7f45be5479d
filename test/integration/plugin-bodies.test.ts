import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, type RawResponse } from '../support/raw-http.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * Issue 32: the platform's own WordPress plugin (and its Magento 2 module) send `Content-Type:
 * application/json` with the POST params form-encoded by PHP's http_build_query, and read with GET, that
 * same header, no body and the params in the query string. Exact bytes over a raw socket; every answer is
 * compared with the same request by name in JSON, and that one with counts made by hand (docs/api.md
 * "Parameters").
 *
 * Data: list 3201 (UTC): sends on 2025-10-20 by workflow 3 (subscribers 1, 2) and workflow 4 (3), on
 * 2025-10-21 by workflow 5 (4), which the requests below leave out.
 */
const USER = 32;
const KEY = 'plugin-key-32';
const LIST = 3201;
const STATS = `/api/1.2/rest/${USER}/${KEY}/automation.stats.json`;

let svc: TestService;

const send = (day: string, workflow: number, sub: number) => ({
  type: 'send',
  event_id: `plugin-${day}-${workflow}-${sub}`,
  list_id: LIST,
  workflow_id: workflow,
  subscriber_id: sub,
  timestamp: `${day}T10:00:00Z`,
});

beforeAll(async () => {
  svc = await startTestService();
  const res = await svc.ingest([
    ...tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST, timezone: 'UTC' }] }),
    send('2025-10-20', 3, 1),
    send('2025-10-20', 3, 2),
    send('2025-10-20', 4, 3),
    send('2025-10-21', 5, 4),
  ]);
  expect(res.body.rejected).toEqual([]);
});
afterAll(() => svc?.stop());

const perDay = (res: RawResponse) => (res.json as any[]).map((r) => [r.date, r.sends_total, r.sends_unique]);

/** What each request below must answer: by name, in JSON, checked against the data above. */
async function byName(): Promise<unknown> {
  const res = await rawRequest(svc.url!, {
    method: 'POST',
    target: STATS,
    headers: [['Content-Type', 'application/json']],
    body: JSON.stringify({
      list_id: LIST,
      workflow_ids: [3, 4],
      start_date: '2025-10-20',
      stop_date: '2025-10-21',
    }),
  });
  expect(res.status, res.text).toBe(200);
  expect(perDay(res)).toEqual([['2025-10-20', 3, 3]]);
  return res.json;
}

describe('form bodies labelled JSON (issue 32)', () => {
  it("POST: the WordPress plugin's bytes (http_build_query under application/json) answer as by name", async () => {
    const expected = await byName();
    // wp_remote_post with a PHP array body: WordPress's HTTP library form-encodes it.
    const body = `list_id=${LIST}&workflow_ids%5B0%5D=3&workflow_ids%5B1%5D=4&start_date=2025-10-20&stop_date=2025-10-21`;
    const res = await rawRequest(svc.url!, {
      method: 'POST',
      target: STATS,
      headers: [
        ['Content-Type', 'application/json'],
        ['User-Agent', 'WordPress/6.8; https://shop.example'],
      ],
      body,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual(expected);
  });

  it('POST: PHP false as "0" and empty values are "not given", as in every form body', async () => {
    const expected = await byName();
    const body = `list_id=${LIST}&workflow_ids%5B0%5D=3&workflow_ids%5B1%5D=4&trigger_id=0&days=&start_date=2025-10-20&stop_date=2025-10-21`;
    const res = await rawRequest(svc.url!, {
      method: 'POST',
      target: STATS,
      headers: [['Content-Type', 'application/json; charset=UTF-8']],
      body,
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual(expected);
  });

  it("GET with Content-Type: application/json, no body, params in the query string (the plugin's reads)", async () => {
    const expected = await byName();
    const res = await rawRequest(svc.url!, {
      target: `${STATS}?list_id=${LIST}&workflow_ids%5B0%5D=3&workflow_ids%5B1%5D=4&start_date=2025-10-20&stop_date=2025-10-21`,
      headers: [['Content-Type', 'application/json']],
    });
    expect(res.status, res.text).toBe(200);
    expect(res.json).toEqual(expected);
  });

  it('a body labelled JSON that is neither JSON nor a form body is still 406', async () => {
    for (const body of ['{"list_id": 3201', 'list_id = 3201', 'hello']) {
      const res = await rawRequest(svc.url!, {
        method: 'POST',
        target: STATS,
        headers: [['Content-Type', 'application/json']],
        body,
      });
      expect(res.status, body).toBe(400);
      expect(res.json, body).toEqual({ err: true, message: 'Invalid param body: not valid JSON', code: 406 });
    }
  });
});
