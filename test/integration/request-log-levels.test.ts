import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturingLogger } from '../support/raw-http.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * docs/operations.md "Logs": one dashboard view writes a handful of `info` lines, not one per asset or
 * per chart. The page is named by its route; its static files and the breakdown's per-workflow calls
 * (marked `X-Dashboard-Part: breakdown` by the page) are `debug` when they succeed.
 */
const USER = 21;
const KEY = 'log-levels-key-0c5e9a';
const LIST = 500;
const { log, lines } = capturingLogger('debug');
let svc: TestService;

beforeAll(async () => {
  svc = await startTestService({}, { log });
  await svc.ingest(tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST }] }));
});
afterAll(async () => {
  await svc?.stop();
});

/** The `request` line of the request answered with `id` (its X-Request-Id). */
async function requestLine(id: string): Promise<{ level: number; route: string | null; status: number }> {
  for (let i = 0; i < 100; i++) {
    const line = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'request' && l.req_id === id);
    if (line) return line;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no request line for ${id}`);
}

const stats = (key: string, headers: Record<string, string> = {}) =>
  fetch(`${svc.url}/api/1.2/rest/${USER}/${key}/automation.stats.json`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ list_id: LIST, workflow_ids: [1] }),
  });

describe('request lines of a dashboard view', () => {
  it('the page is logged at info with its route, not "(no route)"; its script at debug', async () => {
    const page = await fetch(`${svc.url}/dashboard/`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(await requestLine(page.headers.get('x-request-id')!)).toMatchObject({
      level: 30,
      route: '/dashboard/',
      status: 200,
    });
    const script = /src="(\/dashboard\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${svc.url}${script}`);
    await asset.arrayBuffer();
    expect(await requestLine(asset.headers.get('x-request-id')!)).toMatchObject({
      level: 20,
      route: '/dashboard/*',
      status: 200,
    });
  });

  it('a per-workflow breakdown call is debug when answered, info when refused; other calls stay info', async () => {
    const part = await stats(KEY, { 'x-dashboard-part': 'breakdown' });
    expect(part.status).toBe(200);
    expect((await requestLine(part.headers.get('x-request-id')!)).level).toBe(20);

    const plain = await stats(KEY);
    expect(plain.status).toBe(200);
    expect((await requestLine(plain.headers.get('x-request-id')!)).level).toBe(30);

    const refused = await stats('wrong-key', { 'x-dashboard-part': 'breakdown' });
    expect(refused.status).toBe(403);
    expect((await requestLine(refused.headers.get('x-request-id')!)).level).toBe(30);
  });
});
