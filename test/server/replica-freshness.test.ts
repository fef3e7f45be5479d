import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { kafkaEnv, produce, testKafka } from '../support/kafka.js';
import { isCatalogPoll, isChangePoll } from '../support/statements.js';
import { sha256, startTestService, tenant, type TestService } from '../support/service.js';

/**
 * Server mode only (the `server` project, SERVER_SUITES): several services on ONE database of the run's
 * real ClickHouse server, each with its own memory — one writer (ROLE=all, POST /ingest into its
 * pipeline) and two API replicas (ROLE=api) — so that nothing a replica holds can be told of a write but
 * through the store (the change signal of docs/deployment.md, "Several API processes"). Every replica
 * answers from memory (answer cache, day rows) and still gives every write, revocation, key change,
 * re-dating and erasure of the writer once it is acknowledged; how soon is measured by `npm run bench`
 * (a test holds no timing target: `until` only bounds a wait that would otherwise hang).
 */
const USER = 41;
const KEY = 'replica-key';
const LIST = 410;
const OTHER = 411;
const DAY = '2026-03-10';
const NOON = Date.parse(`${DAY}T12:00:00Z`);
let seq = 0;
const FRESHNESS_MS = 8_000;
/** Each test's timeout: above every `until` bound. */
const HANG_MS = 300_000;

const sends = (list: number, n: number, subscriber?: number) =>
  Array.from({ length: n }, () => ({
    type: 'send',
    event_id: `replica-${++seq}`,
    list_id: list,
    workflow_id: 1 + (seq % 3),
    subscriber_id: subscriber ?? seq,
    timestamp: NOON,
  }));

const path = (list: number, key = KEY, extra = '') =>
  `/api/1.2/rest/${USER}/${key}/automation.stats.json?list_id=${list}&start_date=${DAY}&stop_date=${DAY}${extra}`;

/** sends_total of the answer's one day (0 when the day has no row); the status when it is not 200. */
async function sendsOn(svc: TestService, list: number, key = KEY, extra = ''): Promise<number | string> {
  const res = await svc.call(path(list, key, extra));
  if (res.status !== 200) return `status ${res.status}`;
  if (!Array.isArray(res.body)) return `error ${JSON.stringify(res.body)}`;
  return (res.body as { sends_total: number }[]).reduce((n, d) => n + d.sends_total, 0);
}

/**
 * Waits for `check` to hold; a bound against hanging, not a target (the bench measures freshness): on a
 * machine whose cores are all busy a Kafka record took over 20 s to reach the answers, so the bound is
 * far above what any run needs, and each test's timeout above it (HANG_MS).
 */
async function until(what: string, check: () => Promise<boolean>, boundMs = 120_000): Promise<void> {
  const deadline = Date.now() + boundMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${boundMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A change poll of `svc` that begins now, after every write so far was acknowledged: when it returns,
 * each of those writes has been told to the replica (its lists' versions bumped, or everything retired
 * for a start-up recovery). Without it a scheduled poll delayed by a busy machine can bring such a bump
 * after the test has filled what the replica holds, and the replica then rightly reads the engine again.
 */
async function told(svc: TestService): Promise<void> {
  await svc.changePoll!.poll();
}

/** The statements a service runs meanwhile, bar its catalog's and change signal's polls. */
async function statementsDuring(svc: TestService, task: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  svc.db.faultInjector = async (what) => {
    if (!isCatalogPoll(what) && !isChangePoll(what) && !/ FROM catalog\b/.test(what)) seen.push(what);
  };
  try {
    await task();
  } finally {
    svc.db.faultInjector = undefined;
  }
  return seen;
}

describe(
  'API replicas on one server answer from memory and see every other process’s write',
  { timeout: HANG_MS },
  () => {
    let writer: TestService;
    let apis: TestService[];

    beforeAll(async () => {
      expect(process.env.CLICKHOUSE_URL, 'this file runs in the server project only').toBeTruthy();
      const database = `mailstats_test_${randomBytes(6).toString('hex')}`;
      writer = await startTestService({ CLICKHOUSE_DATABASE: database });
      // A freshness bound no poll misses on a busy test machine (its own test below waits it out).
      const api = { CLICKHOUSE_DATABASE: database, ROLE: 'api', STATS_FRESHNESS_MS: String(FRESHNESS_MS) };
      apis = [await startTestService(api), await startTestService(api)];
      const ok = await writer.ingest([
        ...tenant({
          userId: USER,
          apiKey: KEY,
          lists: [
            { list_id: LIST, timezone: 'UTC' },
            { list_id: OTHER, timezone: 'UTC' },
          ],
        }),
        ...sends(LIST, 5),
        ...sends(OTHER, 2),
      ]);
      expect(ok.body.rejected).toEqual([]);
      // Each start-up recovery tells every process that anything may have changed: done before the tests.
      await Promise.all([writer, ...apis].map((s) => s.recovered));
      // Every replica told of every start-up recovery and of the writes above before anything is held.
      for (const api of apis) await told(api);
    });
    afterAll(async () => {
      await Promise.all((apis ?? []).map((a) => a.stop()));
      await writer?.stop();
    });

    it('each replica holds the answers and day rows and answers repeats without a stats read', async () => {
      for (const api of apis) {
        await until('the first answers', async () => (await sendsOn(api, LIST)) === 5);
        expect(await sendsOn(api, OTHER)).toBe(2);
        await api.dayRows!.settled();
        // Another period: a slice of the held rows; the same one again: the answer cache.
        const reads = await statementsDuring(api, async () => {
          expect(await sendsOn(api, LIST, KEY, '&workflow_ids=2')).toBeGreaterThan(0);
          expect(await sendsOn(api, LIST)).toBe(5);
          expect(await sendsOn(api, LIST)).toBe(5);
          expect(await sendsOn(api, OTHER)).toBe(2);
        });
        expect(reads).toEqual([]);
        expect(api.changePoll).toBeDefined();
      }
      // The writer's own process is told at once, as in the embedded mode.
      expect(writer.changePoll).toBeDefined();
    });

    it('a record acknowledged by the writer is in every replica’s answers, the other list’s held answers kept', async () => {
      for (const api of apis) await told(api);
      const before = apis.map((a) => a.statsCache.version(OTHER));
      const res = await writer.ingest(sends(LIST, 3));
      expect(res.status).toBe(200);
      for (const api of apis) await until('the new records', async () => (await sendsOn(api, LIST)) === 8);
      // Only the written list was retired: the other list's entries are still at their version.
      for (const api of apis) await told(api);
      expect(apis.map((a) => a.statsCache.version(OTHER))).toEqual(before);
      for (const api of apis) {
        // Held again after the write was told (the answer above may have been read while it was told).
        expect(await sendsOn(api, LIST)).toBe(8);
        await api.dayRows!.settled();
        const reads = await statementsDuring(api, async () => {
          expect(await sendsOn(api, OTHER)).toBe(2);
          expect(await sendsOn(api, LIST)).toBe(8);
        });
        expect(reads).toEqual([]);
      }
    });

    it('a revoked grant is refused by every replica, also for a request answered from memory before', async () => {
      for (const api of apis) expect(await sendsOn(api, OTHER)).toBe(2);
      await writer.ingest([{ type: 'list_access', user_id: USER, list_id: OTHER, granted: false }]);
      for (const api of apis) await until('the grant revoked', async () => (await sendsOn(api, OTHER)) !== 2);
      // Refused with the API's answer for a list the caller may not read, by the full path and the
      // repeat path alike (the same request target as the answers held).
      for (const api of apis)
        expect(await api.call(path(OTHER))).toEqual({
          status: 403,
          body: { err: true, code: 101, message: `Not allowed for list_id = ${OTHER}` },
        });
    });

    it('a changed key is refused by every replica; the new one answers', async () => {
      const NEW = 'replica-key-2';
      await writer.ingest([{ type: 'user', user_id: USER, api_key_sha256: sha256(NEW), version: 2 }]);
      for (const api of apis) {
        await until('the old key refused', async () => (await sendsOn(api, LIST)) !== 8);
        expect(await sendsOn(api, LIST, NEW)).toBe(8);
      }
      await writer.ingest([{ type: 'user', user_id: USER, api_key_sha256: sha256(KEY), version: 3 }]);
      for (const api of apis) await until('the key back', async () => (await sendsOn(api, LIST)) === 8);
    });

    it('a re-dating by the writer moves every replica to the new generation', async () => {
      // Records at 22:30 UTC on DAY are on the next day in Tokyo.
      const late = Date.parse(`${DAY}T22:30:00Z`);
      await writer.ingest(
        Array.from({ length: 4 }, () => ({
          type: 'send',
          event_id: `replica-${++seq}`,
          list_id: LIST,
          workflow_id: 1,
          subscriber_id: seq,
          timestamp: late,
        })),
      );
      for (const api of apis) await until('the late records', async () => (await sendsOn(api, LIST)) === 12);
      await writer.ingest([{ type: 'list', list_id: LIST, timezone: 'Asia/Tokyo', version: 2 }]);
      for (const api of apis) await until('re-dated', async () => (await sendsOn(api, LIST)) === 8);
      const next = await apis[0]!.call(
        `/api/1.2/rest/${USER}/${KEY}/automation.stats.json?list_id=${LIST}&start_date=2026-03-11&stop_date=2026-03-11`,
      );
      expect(next.body).toMatchObject([{ date: '2026-03-11', sends_total: 4 }]);
    });

    it('an erasure by the writer is in every replica’s answers', async () => {
      await writer.ingest(sends(LIST, 3, 777_777));
      for (const api of apis)
        await until('the subscriber’s sends', async () => (await sendsOn(api, LIST)) === 11);
      await writer.pipeline.erase([{ list_id: LIST, subscriber_id: 777_777 }]);
      for (const api of apis) await until('erased', async () => (await sendsOn(api, LIST)) === 8);
    });

    it('a change row a replica missed (a gap in a writer’s numbers) retires everything it holds', async () => {
      const api = apis[0]!;
      expect(await sendsOn(api, LIST)).toBe(8);
      const before = api.statsCache.version(LIST);
      // Row 2 of a writer never seen, without its row 1: what row 1 named is unknown.
      await writer.db.insert(
        'list_changes',
        ['writer', 'seq', 'lists', 'every'],
        [[randomUUID(), 2, '[999999]', 0]],
      );
      await until('everything retired', async () => api.statsCache.version(LIST) !== before);
      expect(await sendsOn(api, LIST)).toBe(8);
    });

    it('while the change signal cannot be read, nothing held is served', async () => {
      const api = apis[1]!;
      expect(await sendsOn(api, LIST)).toBe(8);
      await api.dayRows!.settled();
      let failing = true;
      api.db.faultInjector = async (what) => {
        if (failing && isChangePoll(what)) throw new Error('change poll refused by the test');
      };
      try {
        await until('held answers no longer served', async () => !api.statsCache.fresh(), 3 * FRESHNESS_MS);
        const reads: string[] = [];
        api.db.faultInjector = async (what) => {
          if (failing && isChangePoll(what)) throw new Error('change poll refused by the test');
          if (!isCatalogPoll(what) && !isChangePoll(what) && !/ FROM catalog\b/.test(what)) reads.push(what);
        };
        // Answered by the engine, right.
        expect(await sendsOn(api, LIST)).toBe(8);
        expect(reads.some((s) => /FROM daily_scopes/.test(s))).toBe(true);
        failing = false;
        await until('served from memory again', async () => api.statsCache.fresh());
      } finally {
        api.db.faultInjector = undefined;
      }
    });
  },
);

describe(
  'a record committed from Kafka by an ingest process is in every API replica’s answers',
  { timeout: HANG_MS },
  () => {
    const env = kafkaEnv(inject('kafkaBrokers'));
    const kafka = testKafka(env.KAFKA_BROKERS);
    let ingester: TestService;
    let apis: TestService[];

    beforeAll(async () => {
      const database = `mailstats_test_${randomBytes(6).toString('hex')}`;
      ingester = await startTestService({ ...env, CLICKHOUSE_DATABASE: database, ROLE: 'ingest' });
      const api = { CLICKHOUSE_DATABASE: database, ROLE: 'api', STATS_FRESHNESS_MS: String(FRESHNESS_MS) };
      // ROLE=ingest serves no API: its URL is the listener of /healthz; the replicas answer.
      apis = [await startTestService(api), await startTestService(api)];
      await produce(
        kafka,
        env.KAFKA_CATALOG_TOPIC,
        tenant({ userId: USER, apiKey: KEY, lists: [{ list_id: LIST, timezone: 'UTC' }] }),
        () => 'catalog',
      );
    });
    afterAll(async () => {
      await Promise.all((apis ?? []).map((a) => a.stop()));
      await ingester?.stop();
    });

    // The consumer in its group first (readiness), then the records.
    it('before and after the replicas hold the list’s answers', async () => {
      await until(
        'the ingester in its consumer group',
        async () => (await fetch(`${ingester.httpUrl}/readyz`)).status === 200,
      );
      await produce(kafka, env.KAFKA_EVENTS_TOPIC, sends(LIST, 4));
      for (const api of apis) await until('the first records', async () => (await sendsOn(api, LIST)) === 4);
      for (const api of apis) {
        // The engine may show all 4 before the replica was told of the last batch's change row: told
        // first, then held again.
        await told(api);
        expect(await sendsOn(api, LIST)).toBe(4);
        await api.dayRows!.settled();
        const reads = await statementsDuring(api, async () => {
          expect(await sendsOn(api, LIST)).toBe(4);
        });
        expect(reads).toEqual([]);
      }
      await produce(kafka, env.KAFKA_EVENTS_TOPIC, sends(LIST, 6));
      for (const api of apis) await until('the later records', async () => (await sendsOn(api, LIST)) === 10);
    });
  },
);
