// Modes: embedded only — the render worker pool, independent of the store
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricValue, scrape } from '../support/metrics.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * Issue 19 A: one tenant's heavy renders must not stall another tenant's (docs/api.md, render limits).
 * Each user holds at most half of the render workers; the queue is bounded and has a deadline, and a
 * render refused by either answers 503 with Retry-After. The requests are sent by a child process, so
 * what is timed is the service's answer, not this process's own event loop.
 */
const HEAVY = { userId: 51, apiKey: 'heavy-key', list: 31, account: 'acc-heavy' };
const LIGHT = { userId: 52, apiKey: 'light-key', list: 32, account: 'acc-light' };
const renderPath = (t: typeof HEAVY) =>
  `/api/1.2/rest/${t.userId}/${t.apiKey}/transactional.templateRender.json`;
/** The report: nested #each over a 300-item param (27 million iterations: the 1 s limit ends it). */
const NESTED = '{{#each items}}{{#each @root.items}}{{#each @root.items}}.{{/each}}{{/each}}{{/each}}';
const HEAVY_RENDERS = 12;
const PROBE_BOUND_MS = 250;
const QUEUE_DEADLINE_MS = 1500;

interface Answer {
  status: number;
  retryAfter: string | null;
  body: { err?: boolean; code?: number; message?: string; content?: string };
  ms: number;
}

/** In a child process: light renders one after another, then the heavy burst with light renders beside it. */
function burst(base: string): Promise<{ baseline: Answer[]; during: Answer[]; heavy: Answer[] }> {
  const script = `
const base = process.env.BASE;
const once = async (path, body) => {
  const t = performance.now();
  try {
    const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await r.text();
    return { status: r.status, retryAfter: r.headers.get('retry-after'), body: JSON.parse(text), ms: performance.now() - t };
  } catch (e) { return { status: 0, retryAfter: null, body: { message: String(e.cause ?? e) }, ms: performance.now() - t }; }
};
const light = () => once(process.env.LIGHT_PATH, process.env.LIGHT_BODY);
(async () => {
  const baseline = [];
  for (let i = 0; i < 15; i++) baseline.push(await light());
  let left = Number(process.env.N);
  const heavy = await Promise.all(Array.from({ length: left }, async () => {
    const a = await once(process.env.HEAVY_PATH, process.env.HEAVY_BODY);
    left--;
    return a;
  }).concat([(async () => {
    await new Promise((r) => setTimeout(r, 50));
    const during = [];
    while (left > 0) { during.push(await light()); await new Promise((r) => setTimeout(r, 20)); }
    return during;
  })()]));
  const during = heavy.pop();
  process.send({ baseline, during, heavy });
  process.disconnect();
})().catch((e) => { console.error(e); process.exit(1); });`;
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, ['-e', script], {
      env: {
        ...process.env,
        BASE: base,
        N: String(HEAVY_RENDERS),
        HEAVY_PATH: renderPath(HEAVY),
        HEAVY_BODY: JSON.stringify({
          list_id: HEAVY.list,
          template_id: 'nested',
          params: { items: Array.from({ length: 300 }, (_, i) => i) },
        }),
        LIGHT_PATH: renderPath(LIGHT),
        LIGHT_BODY: JSON.stringify({ list_id: LIGHT.list, template_id: 'hello', params: { name: 'Ana' } }),
      },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: { baseline: Answer[]; during: Answer[]; heavy: Answer[] } | undefined;
    child.on('message', (m: typeof result) => (result = m));
    child.on('error', fail);
    child.on('exit', (code) => (code === 0 && result ? ok(result) : fail(new Error(`child exited ${code}`))));
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

describe('render fairness: a heavy tenant beside a light one', () => {
  let svc: TestService;

  beforeAll(async () => {
    // A queue of 8 (the heavy user may fill 4 of it) and a 1.5 s deadline, so the burst overflows both.
    svc = await startTestService({
      RENDER_QUEUE_LENGTH: '8',
      RENDER_QUEUE_DEADLINE_MS: String(QUEUE_DEADLINE_MS),
      LOG_LEVEL: process.env.DBG_LOG ?? 'silent',
    });
    const res = await svc.ingest([
      ...tenant({ userId: HEAVY.userId, apiKey: HEAVY.apiKey, lists: [{ list_id: HEAVY.list }] }),
      ...tenant({ userId: LIGHT.userId, apiKey: LIGHT.apiKey, lists: [{ list_id: LIGHT.list }] }),
      {
        type: 'smtp_account',
        account_id: HEAVY.account,
        list_id: HEAVY.list,
        active: true,
        is_default: true,
      },
      {
        type: 'smtp_account',
        account_id: LIGHT.account,
        list_id: LIGHT.list,
        active: true,
        is_default: true,
      },
      { type: 'template', template_id: 'nested', account_id: HEAVY.account, content: NESTED },
      { type: 'template', template_id: 'hello', account_id: LIGHT.account, content: '<p>Hi {{name}}</p>' },
    ]);
    expect(res.body.rejected).toEqual([]);
    // Warm the caches; while the render workers still start, a render may wait past the short deadline.
    for (let i = 0; ; i++) {
      const warm = await svc.call(renderPath(LIGHT), {
        method: 'POST',
        body: JSON.stringify({ list_id: LIGHT.list, template_id: 'hello', params: { name: 'Ana' } }),
        contentType: 'application/json',
      });
      if (warm.status === 200) break;
      expect(warm.status, JSON.stringify(warm.body)).toBe(503);
      expect(i).toBeLessThan(30);
      await new Promise((r) => setTimeout(r, 500));
    }
  });
  afterAll(() => svc?.stop());

  it('the light tenant is answered as usual while the heavy one saturates; the excess gets 503 + Retry-After', async () => {
    const before = await scrape(svc.httpUrl);
    const { baseline, during, heavy } = await burst(svc.httpUrl);
    const report = JSON.stringify({
      baseline: baseline.map((a) => Math.round(a.ms)),
      during: during.map((a) => [a.status, Math.round(a.ms)]),
      heavy: heavy.map((a) => [a.status, a.retryAfter, Math.round(a.ms)]),
    });
    // Every light render answered, correctly, at its usual latency (medians: a moment of this shared
    // machine's load hits both series).
    for (const a of [...baseline, ...during]) {
      expect(a.status, report).toBe(200);
      expect(a.body.content).toBe('<p>Hi Ana</p>');
    }
    expect(during.length, report).toBeGreaterThan(0);
    expect(median(during.map((a) => a.ms)), report).toBeLessThan(
      PROBE_BOUND_MS + median(baseline.map((a) => a.ms)),
    );
    // And none waited for the heavy renders (one did for 105 s before: a FIFO queue behind 12 of them;
    // the heavy renders here run 1–3.5 s each before their limit ends them). At most one light render
    // may take a few probe bounds over the slowest before (a moment of this shared 2-core machine: on
    // Node 26 one of 69 took 1,267 ms against a bound of 1,209 while the heavy worker held a core); none
    // may take as long as waiting out the queue deadline would.
    const slowest = Math.max(...baseline.map((a) => a.ms));
    const slow = during.filter((a) => a.ms >= 4 * PROBE_BOUND_MS + slowest);
    expect(slow.length, report).toBeLessThanOrEqual(1);
    expect(Math.max(...during.map((a) => a.ms)), report).toBeLessThan(
      QUEUE_DEADLINE_MS + 4 * PROBE_BOUND_MS + slowest,
    );
    // The heavy tenant: each render either ran (the 1 s limit ends it: 17007) or was refused with 503.
    const refused = heavy.filter((a) => a.status === 503);
    expect(refused.length, report).toBeGreaterThan(0);
    for (const a of heavy) expect([422, 503], report).toContain(a.status);
    for (const a of refused) {
      expect(a.body).toEqual({ err: true, message: 'Service unavailable: render workers busy', code: 503 });
      expect(a.retryAfter).toMatch(/^[1-9]\d*$/);
    }
    for (const a of heavy.filter((h) => h.status === 422)) expect(a.body.code).toBe(17007);
    // Counted by reason: the burst overflows the heavy user's half of the queue at once.
    const after = await scrape(svc.httpUrl);
    const rejected = (reason: string) =>
      metricValue(after, 'mailstats_render_rejected_total', { reason }) -
      metricValue(before, 'mailstats_render_rejected_total', { reason });
    expect(rejected('queue_full'), report).toBeGreaterThan(0);
    expect(rejected('queue_full') + rejected('deadline'), report).toBe(refused.length);
  }, 120_000);
});
