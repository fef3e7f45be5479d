// Modes: embedded only — the answer cache in front of Express, on by default only embedded (server mode needs STATS_CACHE_MS)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate } from '../../shared/dates.js';
import { metricValue, scrape } from '../support/metrics.js';
import { rawRequest } from '../support/raw-http.js';
import { sha256, startTestService, tenant, type TestService } from '../support/service.js';

/**
 * automation.stats requests sent again byte for byte, answered in front of Express (docs/api.md "Answers
 * sent again"): the same answer as the full path, and never one the full path would no longer give — a
 * key rotated, a grant revoked, new activity — in the running service.
 */
const SERVER = Boolean(process.env.CLICKHOUSE_URL);
const NOON = Date.parse(`${localDate(Date.now() - 2 * 86_400_000, 'UTC')}T12:00:00Z`);
let svc: TestService;
let seq = 0;

const sends = (list: number, n: number) =>
  Array.from({ length: n }, () => ({
    type: 'send',
    event_id: `repeat-${++seq}`,
    list_id: list,
    workflow_id: 1,
    subscriber_id: seq,
    timestamp: NOON,
  }));
const target = (user: number, key: string, list: number) =>
  `/api/1.2/rest/${user}/${key}/automation.stats.json?list_id=${list}&days=7`;

/** How many catalog user look-ups `fn` made: the full path makes at least one, a repeat none. */
async function userLookups(fn: () => Promise<unknown>): Promise<number> {
  const user = svc.catalog.user.bind(svc.catalog);
  let calls = 0;
  svc.catalog.user = (id: number) => {
    calls++;
    return user(id);
  };
  try {
    await fn();
  } finally {
    svc.catalog.user = user;
  }
  return calls;
}

beforeAll(async () => {
  svc = await startTestService(SERVER ? { STATS_CACHE_MS: '600000' } : {});
});
afterAll(() => svc?.stop());

async function newTenant(user: number, key: string, list: number) {
  const res = await svc.ingest([
    ...tenant({ userId: user, apiKey: key, lists: [{ list_id: list, timezone: 'UTC' }] }),
    ...sends(list, 3),
  ]);
  expect(res.body.rejected).toEqual([]);
}

describe('a stats request sent again', () => {
  it('has the full path’s status, headers and bytes, without its look-ups, and is counted and logged as one', async () => {
    await newTenant(61, 'repeat-key-61', 610);
    const path = target(61, 'repeat-key-61', 610);
    const first = await rawRequest(svc.url!, { target: path });
    expect(first.status, first.text).toBe(200);
    expect(JSON.parse(first.text)).toEqual([expect.objectContaining({ sends_total: 3 })]);
    const counts = async () => {
      const m = await scrape(svc.url!);
      return {
        requests: metricValue(m, 'mailstats_http_requests_total', {
          operation: 'automation.stats',
          status: '200',
          code: '0',
        }),
        hits: metricValue(m, 'mailstats_stats_cache_requests_total', { result: 'hit' }),
      };
    };
    const before = await counts();
    let again!: typeof first;
    expect(await userLookups(async () => (again = await rawRequest(svc.url!, { target: path })))).toBe(0);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    const names = (h: Record<string, string | string[] | undefined>) => Object.keys(h).sort();
    expect(names(again.headers)).toEqual(names(first.headers));
    for (const h of ['content-type', 'content-length', 'connection'])
      expect(again.headers[h]).toBe(first.headers[h]);
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    const after = await counts();
    expect(after.requests - before.requests).toBe(1);
    expect(after.hits - before.hits).toBe(1);
  });

  it('after the key is rotated: the old key gets 101, the new one the answer', async () => {
    await newTenant(62, 'repeat-key-62', 620);
    const old = target(62, 'repeat-key-62', 620);
    for (let i = 0; i < 2; i++) expect((await rawRequest(svc.url!, { target: old })).status).toBe(200);
    const res = await svc.ingest([
      { type: 'user', user_id: 62, api_key_sha256: sha256('rotated-62'), version: 2 },
    ]);
    expect(res.body.rejected).toEqual([]);
    const refused = await rawRequest(svc.url!, { target: old });
    expect(refused.status, refused.text).toBe(403);
    expect(JSON.parse(refused.text).code).toBe(101);
    expect((await rawRequest(svc.url!, { target: target(62, 'rotated-62', 620) })).status).toBe(200);
  });

  it('after the grant is revoked: 101', async () => {
    await newTenant(63, 'repeat-key-63', 630);
    const path = target(63, 'repeat-key-63', 630);
    for (let i = 0; i < 2; i++) expect((await rawRequest(svc.url!, { target: path })).status).toBe(200);
    const res = await svc.ingest([
      { type: 'list_access', user_id: 63, list_id: 630, granted: false, version: 2 },
    ]);
    expect(res.body.rejected).toEqual([]);
    const refused = await rawRequest(svc.url!, { target: path });
    expect(refused.status, refused.text).toBe(403);
  });

  it('after new activity of the list: the new counts', async () => {
    await newTenant(64, 'repeat-key-64', 640);
    const path = target(64, 'repeat-key-64', 640);
    const total = (text: string) =>
      (JSON.parse(text) as { sends_total: number }[]).reduce((s, r) => s + r.sends_total, 0);
    for (let i = 0; i < 2; i++) expect(total((await rawRequest(svc.url!, { target: path })).text)).toBe(3);
    expect((await svc.ingest(sends(640, 2))).body.rejected).toEqual([]);
    expect(total((await rawRequest(svc.url!, { target: path })).text)).toBe(5);
  });
});
