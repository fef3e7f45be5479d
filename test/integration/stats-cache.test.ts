// Modes: embedded only — the answer cache, on by default only embedded (server mode needs STATS_CACHE_MS)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate } from '../../shared/dates.js';
import { metricValue, scrape } from '../support/metrics.js';
import { startTestService, tenant, type TestService } from '../support/service.js';

/**
 * The automation.stats answer cache (issue 12): repeated queries are served from it, and a write that
 * has been answered is always in the next answer (docs/records.md "Ingest over HTTP": without Kafka, accepted records are
 * visible before the answer is sent), whatever was cached before.
 */
const USER = 31;
const KEY = 'stats-cache-key';
const A = 41;
const B = 42;
const CACHE = 'mailstats_stats_cache_requests_total';

let svc: TestService;
let seq = 0;

/** Activity of `list` at a fixed instant (noon UTC two days ago: the same date in UTC and Bucharest). */
const NOON = Date.parse(`${localDate(Date.now() - 2 * 86_400_000, 'UTC')}T12:00:00Z`);
function sends(list: number, n: number, at = NOON) {
  return Array.from({ length: n }, () => ({
    type: 'send',
    event_id: `cache-${++seq}`,
    list_id: list,
    workflow_id: 1,
    subscriber_id: seq,
    timestamp: at,
  }));
}

async function stats(list: number, extra = '') {
  const res = await svc.call(
    `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${list}&days=7${extra}`,
  );
  expect(res.status).toBe(200);
  return res.body as { date: string; sends_total: number }[];
}
const total = (rows: { sends_total: number }[]) => rows.reduce((s, r) => s + r.sends_total, 0);

async function cacheCounts() {
  const m = await scrape(svc.url!);
  return { hit: metricValue(m, CACHE, { result: 'hit' }), miss: metricValue(m, CACHE, { result: 'miss' }) };
}

/** Runs `fn` and returns how many stats reads it served from the cache and from ClickHouse. */
async function delta(fn: () => Promise<unknown>) {
  const before = await cacheCounts();
  await fn();
  const after = await cacheCounts();
  return { hit: after.hit - before.hit, miss: after.miss - before.miss };
}

/** Against a server (CLICKHOUSE_URL in the test environment) the cache is on only through STATS_CACHE_MS. */
const SERVER = Boolean(process.env.CLICKHOUSE_URL);

beforeAll(async () => {
  // Embedded: the default (on, without expiry, exact through the version bumps alone).
  svc = await startTestService(SERVER ? { STATS_CACHE_MS: '600000' } : {});
  const ok = await svc.ingest([
    ...tenant({
      userId: USER,
      apiKey: KEY,
      lists: [
        { list_id: A, timezone: 'UTC' },
        { list_id: B, timezone: 'UTC' },
      ],
    }),
    ...sends(A, 3),
    ...sends(B, 2),
  ]);
  expect(ok.body.rejected).toEqual([]);
});

let stopped = false;
afterAll(async () => {
  if (!stopped) await svc?.stop();
});

describe('automation.stats answer cache (embedded)', () => {
  it('is on by default in the embedded mode', () => {
    expect(svc.config.STATS_CACHE_MS).toBe(SERVER ? 600_000 : undefined);
    expect(svc.statsCache.enabled).toBe(true);
  });

  it('serves a repeated query from the cache, with the same answer', async () => {
    let first: unknown;
    expect(
      await delta(async () => {
        first = await stats(A, '&workflow_ids=1');
      }),
    ).toEqual({ hit: 0, miss: 1 });
    let again: unknown;
    expect(
      await delta(async () => {
        again = await stats(A, '&workflow_ids=1');
      }),
    ).toEqual({ hit: 1, miss: 0 });
    expect(again).toEqual(first);
    expect(total(first as never)).toBe(3);
  });

  it('shows records accepted by POST /ingest in the very next answer', async () => {
    await stats(A);
    expect((await delta(() => stats(A))).hit).toBe(1); // cached before the write
    const res = await svc.ingest(sends(A, 4));
    expect(res.body).toEqual({ accepted: 4, rejected: [] });
    let rows: { sends_total: number }[] = [];
    expect(
      await delta(async () => {
        rows = await stats(A);
      }),
    ).toEqual({ hit: 0, miss: 1 });
    expect(total(rows)).toBe(7);
    // …and that answer is cached in turn.
    expect((await delta(() => stats(A))).hit).toBe(1);
  });

  it('a write to another list does not invalidate', async () => {
    const before = total(await stats(A));
    expect((await delta(() => stats(A))).hit).toBe(1);
    expect((await svc.ingest(sends(B, 5))).body.accepted).toBe(5);
    let rows: { sends_total: number }[] = [];
    expect(
      await delta(async () => {
        rows = await stats(A);
      }),
    ).toEqual({ hit: 1, miss: 0 });
    expect(total(rows)).toBe(before);
    expect(total(await stats(B))).toBe(7);
  });

  it('the re-dating of a list (a new time zone after its activity) invalidates', async () => {
    // A send at 22:30 UTC: that date in UTC, the next date in Bucharest (UTC+2/+3).
    const late = NOON + 10.5 * 3_600_000;
    expect((await svc.ingest(sends(B, 1, late))).body.accepted).toBe(1);
    const range = `&start_date=${localDate(NOON - 86_400_000, 'UTC')}&stop_date=${localDate(NOON + 2 * 86_400_000, 'UTC')}`;
    const utc = await stats(B, range);
    expect((await delta(() => stats(B, range))).hit).toBe(1);
    const utcDay = localDate(late, 'UTC');
    const zonedDay = localDate(late, 'Europe/Bucharest');
    expect(zonedDay).not.toBe(utcDay);
    expect(utc.find((r) => r.date === utcDay)?.sends_total).toBe(8);

    const res = await svc.ingest([
      { type: 'list', list_id: B, name: 'list B', timezone: 'Europe/Bucharest' },
    ]);
    expect(res.body).toEqual({ accepted: 1, rejected: [] });
    let zoned: { date: string; sends_total: number }[] = [];
    expect(
      await delta(async () => {
        zoned = await stats(B, range);
      }),
    ).toEqual({ hit: 0, miss: 1 });
    expect(zoned.find((r) => r.date === utcDay)?.sends_total).toBe(7);
    expect(zoned.find((r) => r.date === zonedDay)?.sends_total).toBe(1);
  });

  it('different workflow sets, triggers and periods are different entries', async () => {
    await stats(A, '&workflow_ids=1,2&days=3');
    const d = await delta(async () => {
      await stats(A, '&workflow_ids=2,1&days=3'); // same set, other order: same entry
      await stats(A, '&workflow_ids=1,2&trigger_id=9&days=3');
      await stats(A, '&workflow_ids=1,2&days=4');
    });
    expect(d).toEqual({ hit: 1, miss: 2 });
  });
});

describe('the stats memory on /metrics', () => {
  it('shows what the lists held count against STATS_MEMORY_ROWS, and no read in flight once they are held', async () => {
    const gauges = async () => {
      const m = await scrape(svc.url!);
      return {
        size: metricValue(m, 'mailstats_stats_memory_rows'),
        reads: metricValue(m, 'mailstats_stats_memory_reads'),
      };
    };
    await stats(B, '&days=5'); // B's rows are read into memory in the background
    await svc.dayRows!.settled();
    const held = svc.dayRows!.heldOf(B)!.size;
    expect(held).toBeGreaterThan(0);
    const now = await gauges();
    expect(now.reads).toBe(0);
    expect(now.size).toBeGreaterThanOrEqual(held);
    expect(now.size).toBeLessThanOrEqual(svc.config.STATS_MEMORY_ROWS);
  });
});

describe('automation.stats answer cache off', () => {
  it('STATS_CACHE_MS=0 reads ClickHouse every time and still answers the same', async () => {
    // One embedded store per process: the first service goes first.
    stopped = true;
    await svc.stop();
    const off = await startTestService({ STATS_CACHE_MS: '0' });
    try {
      expect(off.statsCache.enabled).toBe(false);
      await off.ingest([...tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: A }] }), ...sends(A, 2)]);
      const url = `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${A}&days=7`;
      const m0 = await scrape(off.url!);
      const [r1, r2] = [await off.call(url), await off.call(url)];
      const m1 = await scrape(off.url!);
      expect(r2.body).toEqual(r1.body);
      expect(total(r1.body)).toBe(2);
      expect(metricValue(m1, CACHE) - metricValue(m0, CACHE)).toBe(0);
      expect(off.statsCache.size).toBe(0);
    } finally {
      await off.stop();
    }
  });
});
