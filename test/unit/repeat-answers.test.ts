import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { JsonAnswer } from '../../query-api/api12/json-answer.js';
import { RateLimiter } from '../../query-api/rate-limit.js';
import { StatsCache } from '../../query-api/stats/cache.js';
import { RepeatAnswers } from '../../query-api/stats/repeat-answers.js';
import type { Catalog } from '../../shared/catalog/catalog.js';
import { createLogger } from '../../shared/log.js';

/**
 * RepeatAnswers in front of a stand-in for the full path (which says "full"), with a real answer cache
 * and rate limiter; the catalog is only its version here. What a real service does with it is in
 * test/integration/repeat-answers.test.ts.
 */
const Q = { listId: 7, workflowIds: null, triggerId: null, from: '2026-03-01', to: '2026-03-30' };
const TARGET = '/api/1.2/rest/5/the-key/automation.stats.json?list_id=7&days=30';
// 23:50 UTC: the next quarter hour is midnight UTC.
const T0 = Date.parse('2026-03-30T23:50:00Z');

interface Rig {
  url: string;
  cache: StatsCache;
  catalog: { version: number; isFresh: boolean };
  repeats: RepeatAnswers;
  clock: { now: number };
  full: () => number;
  lines: Record<string, unknown>[];
  /** Has the full path answer `target` with the cached answer, as api12Route does. */
  answerOnce: (target?: string) => Promise<void>;
}

/** The full path's request as `remember` reads it. */
const request = (target: string) => ({
  method: 'GET',
  headers: {},
  originalUrl: target,
  params: { userId: decodeURIComponent(/\/rest\/([^/]+)\//.exec(target)![1]!) },
});

let server: Server | undefined;
afterEach(() => new Promise<void>((ok) => (server ? server.close(() => ok()) : ok())));

async function rig(limiter?: RateLimiter): Promise<Rig> {
  const cache = new StatsCache({ enabled: true, ttlMs: 0 });
  const catalog = { version: 1, isFresh: true };
  const clock = { now: T0 };
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  const repeats = new RepeatAnswers(
    cache,
    catalog as unknown as Catalog,
    limiter,
    createLogger('info', stream),
    () => clock.now,
  );
  let full = 0;
  server = createServer(
    repeats.listener((_req, res) => {
      full++;
      res.end('full');
    }),
  );
  await new Promise<void>((ok) => server!.listen(0, '127.0.0.1', () => ok()));
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const answerOnce = async (target = TARGET) => {
    const start = repeats.begin();
    const answer = await cache.read(Q, 'RON', async () =>
      JsonAnswer.from([{ date: '2026-03-30', sends: 1 }]),
    );
    repeats.remember(request(target), 'automation.stats', answer, start);
  };
  return { url, cache, catalog, repeats, clock, full: () => full, lines, answerOnce };
}

const get = async (url: string, init?: RequestInit) => {
  const res = await fetch(url, init);
  return { status: res.status, headers: res.headers, text: await res.text() };
};

describe('RepeatAnswers', () => {
  it('answers a request target the full path answered, with the cached bytes, a request id and a request line', async () => {
    const r = await rig();
    await r.answerOnce();
    const res = await get(r.url + TARGET, { headers: { 'X-Request-Id': 'abc-123' } });
    expect(res.status).toBe(200);
    expect(res.text).toBe('[{"date":"2026-03-30","sends":1}]');
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('content-length')).toBe(String(Buffer.byteLength(res.text)));
    expect(res.headers.get('x-request-id')).toBe('abc-123');
    expect(r.full()).toBe(0);
    expect(r.lines).toEqual([
      expect.objectContaining({
        msg: 'request',
        req_id: 'abc-123',
        method: 'GET',
        route: '/api/1.2/rest/:userId/:apiKey/:operation',
        operation: 'automation.stats',
        status: 200,
      }),
    ]);
  });

  it('only the exact target: another key, another query, HEAD or a body go to the full path', async () => {
    const r = await rig();
    await r.answerOnce();
    await get(r.url + TARGET.replace('the-key', 'the-kez'));
    await get(r.url + TARGET + '&x=1');
    await get(r.url + TARGET, { method: 'HEAD' });
    await get(r.url + TARGET, { method: 'POST', body: 'list_id=8' });
    expect(r.full()).toBe(4);
  });

  it('not after the catalog changed, nor after the list was written to, nor once the cache is off', async () => {
    const r = await rig();
    await r.answerOnce();
    r.catalog.version++;
    expect((await get(r.url + TARGET)).text).toBe('full');
    expect(r.repeats.size).toBe(0); // dropped, not tried again

    await r.answerOnce();
    r.cache.bump([7]);
    expect((await get(r.url + TARGET)).text).toBe('full');

    await r.answerOnce();
    r.cache.enabled = false;
    expect((await get(r.url + TARGET)).text).toBe('full');
    expect(r.full()).toBe(3);
  });

  it('nothing is remembered when the catalog changed while the request was handled', async () => {
    const r = await rig();
    const start = r.repeats.begin();
    const answer = await r.cache.read(Q, 'RON', async () => JsonAnswer.from([]));
    r.catalog.version++; // e.g. the key was revoked after the request was authorised
    r.repeats.remember(request(TARGET), 'automation.stats', answer, start);
    expect(r.repeats.size).toBe(0);
  });

  it('not from the next UTC quarter hour on: a period counted from today is resolved again', async () => {
    const r = await rig();
    await r.answerOnce();
    r.clock.now = Date.parse('2026-03-30T23:59:59.999Z');
    expect((await get(r.url + TARGET)).status).toBe(200);
    expect(r.full()).toBe(0);
    r.clock.now = Date.parse('2026-03-31T00:00:00.000Z');
    expect((await get(r.url + TARGET)).text).toBe('full');
    expect(r.full()).toBe(1);
  });

  it('the rate limit of the user id is taken; a refused take goes to the full path (which answers 429)', async () => {
    const limiter = new RateLimiter(1, 100, () => T0); // burst 2, and no time passes
    const r = await rig(limiter);
    await r.answerOnce();
    const texts = [];
    for (let i = 0; i < 3; i++) texts.push((await get(r.url + TARGET)).text);
    expect(texts.map((t) => t === 'full')).toEqual([false, false, true]);
    expect(limiter.take('5').ok).toBe(false); // the user id's bucket, as the full path's guard names it
  });

  it('the bucket is the user id as the router decoded it, however the path spelled it', async () => {
    const limiter = new RateLimiter(1, 100, () => T0);
    const r = await rig(limiter);
    const spelled = TARGET.replace('/rest/5/', '/rest/%35/');
    await r.answerOnce(spelled);
    for (let i = 0; i < 2; i++) expect((await get(r.url + spelled)).status).toBe(200);
    expect(r.full()).toBe(0);
    expect(limiter.take('5').ok).toBe(false);
    expect(limiter.take('%35').ok).toBe(true);
  });

  it('only answers of automation.stats that the answer cache holds are remembered', async () => {
    const r = await rig();
    const req = request(TARGET);
    r.repeats.remember(req, 'automation.stats', JsonAnswer.from([]), r.repeats.begin()); // not from the cache
    const cached = await r.cache.read(Q, 'RON', async () => JsonAnswer.from([]));
    r.repeats.remember(req, 'list.all', cached, r.repeats.begin());
    expect(r.repeats.size).toBe(0);
  });
});
