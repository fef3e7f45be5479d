import { describe, expect, it } from 'vitest';
import { JsonAnswer } from '../../query-api/api12/json-answer.js';
import { STATS_CACHE_LARGE_BYTES, StatsCache } from '../../query-api/stats/cache.js';

const Q = { listId: 1, workflowIds: null, triggerId: null, from: '2026-01-01', to: '2026-01-31' };
const rows = (n: number) => JsonAnswer.from([{ date: '2026-01-02', sends_total: n }]);
/** What an answer sends (a kept answer holds its bytes alone, not the object it was made from). */
const text = (answer: JsonAnswer) => answer.bytes.toString('utf8');

/** A read held open until `release` is called. */
function held(n: number) {
  let release!: () => void;
  const gate = new Promise<void>((ok) => (release = ok));
  let calls = 0;
  const load = async () => {
    calls++;
    await gate;
    return rows(n);
  };
  return { load, release, calls: () => calls };
}

describe('StatsCache', () => {
  it('a read that began before a bump is answered but not kept under the newer version', async () => {
    const cache = new StatsCache({ enabled: true, ttlMs: 0 });
    const slow = held(1);
    const pending = cache.read(Q, 'RON', slow.load);
    cache.bump([1]); // a write completed while the read was in flight
    slow.release();
    expect(text(await pending)).toBe(text(rows(1)));
    expect(cache.size).toBe(0);
    let reads = 0;
    expect(text(await cache.read(Q, 'RON', async () => (reads++, rows(2))))).toBe(text(rows(2)));
    expect(reads).toBe(1);
  });

  it('identical concurrent misses share one read; after a bump a new read is made', async () => {
    const cache = new StatsCache({ enabled: true, ttlMs: 0 });
    const slow = held(1);
    const a = cache.read(Q, 'RON', slow.load);
    const b = cache.read(Q, 'RON', slow.load);
    cache.bump([1]);
    const fresh = held(2);
    const c = cache.read(Q, 'RON', fresh.load);
    slow.release();
    fresh.release();
    expect(text(await a)).toBe(text(rows(1)));
    expect(text(await b)).toBe(text(rows(1)));
    expect(text(await c)).toBe(text(rows(2)));
    expect(slow.calls()).toBe(1);
    expect(fresh.calls()).toBe(1);
    expect(text(await cache.read(Q, 'RON', async () => rows(3)))).toBe(text(rows(2))); // kept at the new version
  });

  it('a bump of another list, or none, keeps the entry; bumpAll drops it', async () => {
    const cache = new StatsCache({ enabled: true, ttlMs: 0 });
    await cache.read(Q, 'RON', async () => rows(1));
    cache.bump([2]);
    expect(text(await cache.read(Q, 'RON', async () => rows(9)))).toBe(text(rows(1)));
    cache.bumpAll();
    expect(text(await cache.read(Q, 'RON', async () => rows(3)))).toBe(text(rows(3)));
  });

  it('is bounded in entries and bytes', async () => {
    const cache = new StatsCache({ enabled: true, ttlMs: 0, maxEntries: 3, maxBytes: 1e9 });
    for (let i = 1; i <= 5; i++) await cache.read({ ...Q, listId: i }, 'RON', async () => rows(i));
    expect(cache.size).toBe(3);
    const small = new StatsCache({ enabled: true, ttlMs: 0, maxEntries: 100, maxBytes: 1_000 });
    for (let i = 1; i <= 5; i++) await small.read({ ...Q, listId: i }, 'RON', async () => rows(i));
    expect(small.size).toBeLessThan(5);
  });

  it('keys the answer by the currency too (it shapes the answer)', async () => {
    const cache = new StatsCache({ enabled: true, ttlMs: 0 });
    await cache.read(Q, 'RON', async () => rows(1));
    expect(text(await cache.read(Q, 'EUR', async () => rows(2)))).toBe(text(rows(2)));
    expect(text(await cache.read(Q, 'RON', async () => rows(3)))).toBe(text(rows(1)));
  });

  it('disabled: every read goes through', async () => {
    const cache = new StatsCache({ enabled: false, ttlMs: 0 });
    let reads = 0;
    await cache.read(Q, 'RON', async () => (reads++, rows(1)));
    await cache.read(Q, 'RON', async () => (reads++, rows(1)));
    expect(reads).toBe(2);
    expect(cache.size).toBe(0);
  });
});

describe('StatsCache: what it keeps', () => {
  it('an answer as its bytes alone: a hit sends the same text, and parses it back when the object is asked', async () => {
    const cache = new StatsCache({ enabled: true, ttlMs: 0 });
    const made = rows(1);
    expect(await cache.read(Q, 'RON', async () => made)).toBe(made);
    const hit = await cache.read(Q, 'RON', async () => rows(2));
    expect(hit).not.toBe(made);
    expect(text(hit)).toBe(text(made));
    expect(hit.value()).toEqual(made.value());
    expect(cache.origin(hit)).toEqual(cache.origin(made));
    expect(cache.origin(hit)).toBeDefined();
  });
});

describe('StatsCache: large answers', () => {
  /** An answer of at least STATS_CACHE_LARGE_BYTES (a year of days is ~240 KB). */
  const large = (n: number) =>
    JsonAnswer.from([{ date: '2026-01-02', sends_total: n, pad: 'x'.repeat(STATS_CACHE_LARGE_BYTES) }]);

  it("keeps one only from its query's second ask: a query asked once leaves nothing behind", async () => {
    const cache = new StatsCache({ enabled: true, ttlMs: 0 });
    let reads = 0;
    const load = async () => (reads++, large(reads));
    expect(text(await cache.read(Q, 'RON', load))).toBe(text(large(1)));
    expect(cache.size).toBe(0);
    expect(text(await cache.read(Q, 'RON', load))).toBe(text(large(2))); // asked again: made and kept
    expect(cache.size).toBe(1);
    expect(text(await cache.read(Q, 'RON', load))).toBe(text(large(2))); // a hit
    expect(reads).toBe(2);
    // Another query's large answer is its own: asked once, not kept.
    await cache.read({ ...Q, to: '2026-12-31' }, 'RON', load);
    expect(cache.size).toBe(1);
  });

  it('a second ask whose read began before a bump is answered but not kept; the next ask is', async () => {
    const cache = new StatsCache({ enabled: true, ttlMs: 0 });
    await cache.read(Q, 'RON', async () => large(1));
    let release!: () => void;
    const gate = new Promise<void>((ok) => (release = ok));
    const pending = cache.read(Q, 'RON', async () => (await gate, large(2)));
    cache.bump([1]);
    release();
    expect(text(await pending)).toBe(text(large(2)));
    expect(cache.size).toBe(0);
    await cache.read(Q, 'RON', async () => large(3));
    expect(text(await cache.read(Q, 'RON', async () => large(4)))).toBe(text(large(3)));
  });
});
