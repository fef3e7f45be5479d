import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { startClickHouseServer } from '../scripts/clickhouse-server.mjs';
import type { Message } from 'kafkajs';
import { addDays, localDate } from '../shared/dates.js';
import { listPairs, listScopes, READ_SETTINGS, statsSql } from '../shared/clickhouse/stats-store.js';
import { checkRecord, type MailstatsRecord } from '../shared/records/index.js';
import type { Service } from '../service/start.js';
import {
  benchBroker,
  committedToEnd,
  createTopics,
  deleteTopics,
  endToEnd,
  fmtRate,
  kafkaCounters,
  produce,
  statsTotal,
} from './kafka-e2e.js';
import { BENCH, benchBatches, rng } from './stats-data.js';
import { distinctSet } from './stats-mix.js';
import { benchService, fmt, measure, percentile, table } from './support.js';

/** Issue 20's many-tenant workload: the one-list bench's records spread over this many lists. */
const LISTS = 10_000;
const WORKFLOWS_PER_LIST = 3;
const KEY = 'bench-key';
/** Bodies of POST /ingest (records of the bench's shape: 75k fit the 10 MiB limit; bench/ingest.ts). */
const BODY_RECORDS = 75_000;
const CATALOG_BODY_RECORDS = 25_000;
/** Catalog bodies in server mode (see serverModeRun). */
const SERVER_CATALOG_BODY_RECORDS = 1_000;
/** Records of the pipeline-alone rows (after the HTTP rows, new ids). */
const ALONE = 300_000;
const TARGET = { catalogRate: 20_000, ingestShare: 0.8, statsP50Over: 1.2 };
/** Partitions of the Kafka pair's topics (as bench/kafka.ts) and records per produce request. */
const PARTITIONS = 3;
const PRODUCE_BATCH = 10_000;

/** List ids by Zipf's law (s = 1): rank k draws ∝ 1/k, so the busiest list has ~10% of the records. */
export function zipf(n: number, seed: number): () => number {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let k = 1; k <= n; k++) cdf[k - 1] = sum += 1 / k;
  const rnd = rng(seed);
  return () => {
    const u = rnd() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
}

const user = () => ({
  type: 'user',
  user_id: 1,
  api_key_sha256: createHash('sha256').update(KEY).digest('hex'),
});

type CatalogEntry = { type: string; list_id?: number; workflow_id?: number; [field: string]: unknown };

/** Per list: the list, a grant to the bench user, 3 workflows (5 records; 50,000 for 10,000 lists). */
function catalogRecords(lists: number): CatalogEntry[] {
  const records: CatalogEntry[] = [user()];
  for (let id = 1; id <= lists; id++) {
    records.push({ type: 'list', list_id: id, name: `list ${id}`, timezone: 'Europe/Bucharest' });
    records.push({ type: 'list_access', user_id: 1, list_id: id, granted: true });
    for (let w = 1; w <= WORKFLOWS_PER_LIST; w++)
      records.push({ type: 'workflow', workflow_id: id * 10 + w, list_id: id, name: `wf ${w}` });
  }
  return records;
}

export function catalogBodies(lists: number, bodyRecords = CATALOG_BODY_RECORDS): string[] {
  const records = catalogRecords(lists);
  const out: string[] = [];
  for (let i = 0; i < records.length; i += bodyRecords)
    out.push(
      records
        .slice(i, i + bodyRecords)
        .map((r) => JSON.stringify(r))
        .join('\n'),
    );
  return out;
}

/**
 * The one-list bench's records (bench/stats-data.ts), each moved to a list drawn by `listOf`, in
 * bodies made one at a time (10M records would not fit in memory at once).
 */
export function* activityBodies(total: number, today: string, listOf: () => number): Generator<string> {
  for (const batch of benchBatches(total, BODY_RECORDS, 't', today))
    yield batch.map(({ record }) => JSON.stringify({ ...record, list_id: listOf() })).join('\n');
}

/** Sequential POST /ingest of `bodies`: records/s over the time spent in requests (not in making bodies). */
export async function post(svc: Service, bodies: Iterable<string>): Promise<number> {
  let records = 0;
  let ms = 0;
  for (const body of bodies) {
    const t = performance.now();
    const res = await fetch(`${svc.url}/ingest`, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${svc.ingestToken}`, 'content-type': 'application/x-ndjson' },
    });
    const answer = (await res.json()) as { accepted: number; rejected: unknown[] };
    ms += performance.now() - t;
    if (res.status !== 200 || answer.rejected.length > 0)
      throw new Error(`ingest answered ${res.status}: ${JSON.stringify(answer).slice(0, 300)}`);
    records += answer.accepted;
  }
  return records / (ms / 1000);
}

/** Records stored by the worker so far (its accepted Kafka counter); none may be dead-lettered. */
async function storedCount(port: number): Promise<number | undefined> {
  const c = await kafkaCounters(port);
  if (c && c.rejected > 0) throw new Error(`the worker dead-lettered ${c.rejected} bench records`);
  return c?.accepted;
}

/**
 * The Kafka half of a pair: the catalog of `lists` lists on the catalog topic, consumed first by the
 * worker as its own process (fresh data directory) until all of it is stored and committed; then the
 * same records as the HTTP rows (`listOf` draws each one's list) on the events topic, consumed by the
 * worker started again on that directory in the same group, so only the activity is left to read.
 * Counted through the worker's /metrics: its accepted counter of source "kafka", incremented once a
 * chunk's pipeline write resolved (before the offset commit). Once the count is complete, the stats
 * API of list 1 must hold exactly the records drawn for it.
 */
async function kafkaRun(
  brokers: string,
  lists: number,
  total: number,
  today: string,
  listOf: () => number,
): Promise<{
  catalog: { e2e: number; e2eFromSpawn: number; records: number };
  e2e: number;
  e2eFromSpawn: number;
}> {
  const id = randomUUID().slice(0, 8);
  const topics = { events: `t${id}.events`, catalog: `t${id}.catalog`, dlq: `t${id}.dlq` };
  const group = `tw-${id}`;
  await createTopics(brokers, Object.values(topics), PARTITIONS);
  try {
    const catalog = catalogRecords(lists);
    // Keyed by entity, as docs/records.md asks of the catalog topic.
    const keyOf = (r: CatalogEntry) =>
      r.type === 'user'
        ? 'user:1'
        : r.type === 'workflow'
          ? `workflow:${r.workflow_id}`
          : `${r.type}:${r.list_id}`;
    const catalogBatches: Message[][] = [];
    for (let i = 0; i < catalog.length; i += PRODUCE_BATCH)
      catalogBatches.push(
        catalog.slice(i, i + PRODUCE_BATCH).map((r) => ({ key: keyOf(r), value: JSON.stringify(r) })),
      );
    await produce(brokers, topics.catalog, catalogBatches);
    console.error(`tenants bench: Kafka, ${lists} list(s): catalog of ${catalog.length} records produced`);
    const catalogRun = await endToEnd({
      brokers,
      topics,
      total: catalog.length,
      group,
      count: storedCount,
      // Stopped only once its offsets are committed to the end: the second start reads no catalog again.
      check: async () => {
        const deadline = Date.now() + 60_000;
        while (!(await committedToEnd(brokers, group, topics.catalog))) {
          if (Date.now() > deadline) throw new Error('the catalog offsets were not committed within 60 s');
          await new Promise((r) => setTimeout(r, 250));
        }
      },
    });

    // The same records as the HTTP rows, keyed as bench/kafka.ts keys them (spread over the partitions
    // alike for one list and for many).
    let ofList1 = 0;
    await produce(
      brokers,
      topics.events,
      (function* () {
        for (const batch of benchBatches(total, PRODUCE_BATCH, 't', today))
          yield batch.map(({ record }, i) => {
            const list_id = listOf();
            if (list_id === 1) ofList1++;
            return { key: String(i % 64), value: JSON.stringify({ ...record, list_id }) };
          });
      })(),
    );
    console.error(
      `tenants bench: Kafka, ${lists} list(s): catalog stored in ${fmtRate(catalogRun.e2eFromSpawn)}/s from spawn; ${total} records produced`,
    );
    const run = await endToEnd({
      brokers,
      topics,
      total,
      group,
      dataDir: catalogRun.dataDir,
      count: storedCount,
      check: async (port) => {
        const stored = await statsTotal(port, KEY, 1, today);
        if (stored !== ofList1)
          throw new Error(`list 1 holds ${stored} records through the stats API, ${ofList1} were sent to it`);
      },
    });
    console.error(
      `tenants bench: Kafka, ${lists} list(s): ${fmtRate(run.e2e)} records/s streaming, ${fmtRate(run.e2eFromSpawn)} from spawn`,
    );
    return {
      catalog: { e2e: catalogRun.e2e, e2eFromSpawn: catalogRun.e2eFromSpawn, records: catalog.length },
      e2e: run.e2e,
      e2eFromSpawn: run.e2eFromSpawn,
    };
  } finally {
    await deleteTopics(brokers, Object.values(topics)).catch(() => undefined);
  }
}

/** Records already validated, for the pipeline alone: as POST /ingest hands them over after parsing. */
export function activityRecords(
  total: number,
  today: string,
  prefix: string,
  listOf: () => number,
): MailstatsRecord[][] {
  const out: MailstatsRecord[][] = [];
  for (const batch of benchBatches(total, BODY_RECORDS, prefix, today))
    out.push(
      batch.map(({ record }) => {
        const check = checkRecord({ ...record, list_id: listOf() });
        if (!check.ok) throw new Error(check.reason);
        return check.record;
      }),
    );
  return out;
}

/**
 * The answer rows (daily_scopes) a batch's day recompute writes: one per shape its tuples name (all
 * workflows, a workflow, a trigger; no (workflow, trigger) rows: those are read from daily_sets).
 */
const SCOPE_ROWS = `
  SELECT uniqExact(list_id, gen, day) + uniqExact(list_id, gen, day, workflow_id)
    + uniqExactIf((list_id, gen, day, trigger_id), trigger_id != 0) AS n
  FROM ingest_batches WHERE batch_id = {batch:String}`;

interface AloneRun {
  rate: number;
  /** Share of the run in the day recompute statement. */
  recompute: number;
  /** Per batch: the recompute's ms and the answer rows it wrote. */
  recomputeMs: number;
  scopeRows: number;
  /** The last batch's recompute statement run again by itself once the writes are done, ms (median of 3). */
  againMs: number;
  /** The engine alone inserting a batch's answer rows (made beforehand) into a copy of daily_scopes, ms. */
  insertAloneMs: number;
}

/**
 * The pipeline's write alone (dating + store: no HTTP, no parsing) of `batches`, records/s, and the
 * share of it the engine spent recomputing the touched (list, day) answers (daily_scopes); then, as the
 * limit by itself, the engine alone inserting as many answer rows as a batch's recompute wrote.
 */
async function pipelineAlone(svc: Service, batches: MailstatsRecord[][]): Promise<AloneRun> {
  const db = svc.db;
  const command = db.command.bind(db);
  let recompute = 0;
  const batchIds: string[] = [];
  let last = '';
  db.command = async (sql, params, settings) => {
    const t = performance.now();
    try {
      return await command(sql, params, settings);
    } finally {
      if (/^\s*INSERT INTO daily_scopes/.test(sql)) {
        recompute += performance.now() - t;
        batchIds.push((params as { batch: string }).batch);
        last = sql;
      }
    }
  };
  const t = performance.now();
  for (const b of batches) await svc.pipeline.write(b);
  const ms = performance.now() - t;
  db.command = command;
  const records = batches.reduce((n, b) => n + b.length, 0);
  let scopeRows = 0;
  for (const batch of batchIds)
    scopeRows += (
      await db.query<{ n: number }>(SCOPE_ROWS, { batch }, { output_format_json_quote_64bit_integers: 0 })
    )[0]!.n;
  scopeRows = Math.round(scopeRows / batchIds.length);
  await db.command(
    'CREATE TABLE bench_scope_rows ENGINE = Memory AS SELECT * FROM daily_scopes LIMIT {n:UInt64}',
    { n: scopeRows },
  );
  const again: number[] = [];
  for (let i = 0; i < 3; i++) {
    const s = performance.now();
    await db.command(last, { batch: batchIds.at(-1)! });
    again.push(performance.now() - s);
  }
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    await db.command('CREATE TABLE bench_scopes AS daily_scopes');
    const s = performance.now();
    await db.command('INSERT INTO bench_scopes SELECT * FROM bench_scope_rows');
    times.push(performance.now() - s);
    await db.command('DROP TABLE bench_scopes SYNC');
  }
  await db.command('DROP TABLE bench_scope_rows SYNC');
  return {
    rate: records / (ms / 1000),
    recompute: recompute / ms,
    recomputeMs: recompute / batchIds.length,
    scopeRows,
    againMs: percentile(again, 50),
    insertAloneMs: percentile(times, 50),
  };
}

/** Sequential distinct stats requests (answer cache off) for one list: latencies in ms, sorted. */
async function distinctStats(
  svc: Service,
  listId: number,
  today: string,
  runs: number,
  queries = distinctSet(today, runs + 20, 99),
): Promise<number[]> {
  const paths = queries.map(
    (q) => `${svc.url}/api/1.2/rest/1/${KEY}/automation.stats.json?list_id=${listId}&${q}`,
  );
  svc.statsCache.enabled = false;
  let i = 0;
  const times = await measure(async () => {
    const res = await fetch(paths[i++]!);
    if (res.status !== 200) throw new Error(`stats answered ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  }, runs);
  svc.statsCache.enabled = true;
  return times;
}

/** `n` distinct queries of one shape: one workflow with a trigger, random 7–120-day periods of the year. */
function pairSet(
  today: string,
  n: number,
  seed: number,
): { workflow: number; trigger: number; from: string; to: string }[] {
  const rnd = rng(seed);
  const out = new Map<string, { workflow: number; trigger: number; from: string; to: string }>();
  while (out.size < n) {
    const length = 7 + Math.floor(rnd() * 114);
    const to = addDays(today, -Math.floor(rnd() * (BENCH.days - length)));
    const q = {
      workflow: 1 + Math.floor(rnd() * BENCH.workflows),
      trigger: 1 + Math.floor(rnd() * BENCH.triggers),
      from: addDays(to, -(length - 1)),
      to,
    };
    out.set(JSON.stringify(q), q);
  }
  return [...out.values()];
}

/**
 * The read of the shape no longer precomputed, for one list: one workflow with a trigger over
 * HTTP (answer cache off; held day rows as the service is configured), the engine statement alone
 * (`statsSql`, as held rows off would run it), and reading the list's held rows (`listScopes`) and its
 * pairs' rows (`listPairs`, computed from daily_sets, read at a first such ask), ms sorted.
 */
async function pairReads(
  svc: Service,
  listId: number,
  today: string,
  runs: number,
): Promise<{ http: number[]; engine: number[]; load: number[]; pairs: number[] }> {
  const queries = pairSet(today, runs + 20, 98);
  const http = await distinctStats(
    svc,
    listId,
    today,
    runs,
    queries.map(
      (q) => `start_date=${q.from}&stop_date=${q.to}&workflow_ids=${q.workflow}&trigger_id=${q.trigger}`,
    ),
  );
  let i = 0;
  const engine = await measure(async () => {
    const q = queries[i++ % queries.length]!;
    const { sql, params } = statsSql({
      listId,
      workflowIds: [q.workflow],
      triggerId: q.trigger,
      from: q.from,
      to: q.to,
    });
    await svc.db.read(sql, params, READ_SETTINGS);
  }, runs);
  const [row] = await svc.db.query<{ gen: number }>(
    'SELECT toUInt64(max(gen)) AS gen FROM list_dating WHERE list_id = {list:UInt64} AND done = 1',
    { list: listId },
    { output_format_json_quote_64bit_integers: 0 },
  );
  const load = await measure(() => listScopes(svc.db, listId, row?.gen ?? 0), 5, 1);
  const pairs = await measure(() => listPairs(svc.db, listId, row?.gen ?? 0), 5, 1);
  return { http, engine, load, pairs };
}

/**
 * The POST /ingest pair (one list, then 10,000 lists drawn by `listOf`) against a real ClickHouse server
 * (scripts/clickhouse-server.mjs, a database of its own per service): the same bodies as the embedded
 * rows, the service in this process as there. Reported beside the embedded rows.
 */
async function serverModeRun(
  total: number,
  today: string,
  listOf: () => number,
): Promise<{ version: string; one: number; many: number; catalog: number }> {
  const clickhouse = await startClickHouseServer({ log: (m: string) => console.error(m) });
  try {
    const rateOf = async (lists: number, draw: () => number) => {
      const svc = await benchService({
        CLICKHOUSE_URL: clickhouse.url,
        CLICKHOUSE_DATABASE: `mailstats_tenants_${randomBytes(4).toString('hex')}`,
      });
      try {
        // Smaller catalog bodies than embedded: when new lists were dated one by one in server mode, a
        // body of 25,000 records outlasted fetch's 300 s header timeout (now they are claimed per batch).
        const catalog = await post(svc, catalogBodies(lists, SERVER_CATALOG_BODY_RECORDS));
        console.error(
          `tenants bench: server mode, catalog of ${lists} list(s): ${Math.round(catalog)} records/s`,
        );
        return { catalog, activity: await post(svc, activityBodies(total, today, draw)) };
      } finally {
        await svc.close();
      }
    };
    const one = (await rateOf(1, () => BENCH.listId)).activity;
    console.error(`tenants bench: server mode, one list: ${Math.round(one)} records/s`);
    const { catalog, activity: many } = await rateOf(LISTS, listOf);
    console.error(`tenants bench: server mode, ${LISTS} lists: ${Math.round(many)} records/s`);
    return { version: clickhouse.version, one, many, catalog };
  } finally {
    await clickhouse.stop();
  }
}

/** The server-mode rows: the ingest rates there, beside the embedded rows of the same run. */
function serverRows(
  server: { version: string; one: number; many: number; catalog: number },
  embedded: { one: number; many: number } | undefined,
  total: number,
): (string | number)[][] {
  const rate = (v: number) => Math.round(v).toLocaleString('en-US');
  const pct = (v: number) => `${Math.round(v * 100)}%`;
  const beside = (s: number, e: number | undefined) =>
    e === undefined ? '' : `embedded: ${rate(e)} records/s (server mode ${pct(s / e)} of it)`;
  return [
    [
      `catalog of ${LISTS.toLocaleString('en-US')} lists, POST /ingest, server mode (bodies of ${SERVER_CATALOG_BODY_RECORDS.toLocaleString('en-US')} records)`,
      `${rate(server.catalog)} records/s`,
      '',
      '',
      'reported',
    ],
    [
      `${total / 1e6}M records over ${LISTS.toLocaleString('en-US')} lists (Zipf), POST /ingest, server mode (ClickHouse ${server.version})`,
      `${rate(server.many)} records/s; one list, server mode: ${rate(server.one)} records/s (${pct(server.many / server.one)})`,
      beside(server.many, embedded?.many),
      '',
      '(reported beside embedded)',
    ],
    [
      `${total / 1e6}M records on one list, POST /ingest, server mode`,
      `${rate(server.one)} records/s`,
      beside(server.one, embedded?.one),
      '',
      '(reported beside embedded)',
    ],
  ];
}

/**
 * Many tenants: the catalog of 10,000 lists, then 1M records over them (Zipf) against the
 * same records on one list, over POST /ingest and over Kafka, and distinct stats reads of the busiest
 * list against the one list's, each pair in this same run. BENCH_TENANTS_RECORDS sets the records
 * (e.g. 10000000 for a 10M run).
 */
export async function tenantsBench(
  total = Number(process.env.BENCH_TENANTS_RECORDS ?? 1_000_000),
  runs = 200,
): Promise<string> {
  const today = localDate(Date.now(), 'Europe/Bucharest');
  const rows: (string | number)[][] = [];
  const rate = (v: number) => Math.round(v).toLocaleString('en-US');
  // BENCH_TENANTS_SERVER_ONLY=1: the server-mode rows alone (no embedded peer), for quick iterations.
  if (process.env.BENCH_TENANTS_SERVER_ONLY === '1') {
    const server = await serverModeRun(total, today, zipf(LISTS, 11));
    return table(
      ['path', 'measured', 'peer (same run)', 'target', 'verdict'],
      serverRows(server, undefined, total),
    );
  }

  // One list: its catalog, then the records, then distinct stats (the peer of every many-list row).
  const one = await benchService();
  await post(one, catalogBodies(1));
  const oneRate = await post(
    one,
    activityBodies(total, today, () => BENCH.listId),
  );
  for (const t of ['daily_sets', 'daily_scopes']) await one.db.command(`OPTIMIZE TABLE ${t} FINAL`);
  const oneStats = await distinctStats(one, BENCH.listId, today, runs);
  const onePairs = await pairReads(one, BENCH.listId, today, runs);
  const oneAlone = await pipelineAlone(
    one,
    activityRecords(ALONE, today, 'w', () => BENCH.listId),
  );
  await one.close();

  const many = await benchService();
  const catalog = catalogBodies(LISTS);
  const catalogCount = catalog.reduce((n, b) => n + b.split('\n').length, 0);
  const catalogRate = await post(many, catalog);
  rows.push([
    `catalog of ${LISTS.toLocaleString('en-US')} lists (list, grant, ${WORKFLOWS_PER_LIST} workflows each: ${catalogCount.toLocaleString('en-US')} records in bodies of ${CATALOG_BODY_RECORDS.toLocaleString('en-US')}), POST /ingest`,
    `${rate(catalogRate)} records/s`,
    '',
    `≥ ${rate(TARGET.catalogRate)} records/s`,
    catalogRate >= TARGET.catalogRate ? 'met' : '**missed**',
  ]);
  const draw = zipf(LISTS, 11);
  const manyRate = await post(many, activityBodies(total, today, draw));
  rows.push([
    `${total / 1e6}M records over ${LISTS.toLocaleString('en-US')} lists (Zipf), POST /ingest`,
    `${rate(manyRate)} records/s`,
    `one list: ${rate(oneRate)} records/s (${Math.round((manyRate / oneRate) * 100)}%)`,
    `≥ ${TARGET.ingestShare * 100}% of one list`,
    manyRate >= TARGET.ingestShare * oneRate ? 'met' : '**missed**',
  ]);
  const manyAlone = await pipelineAlone(many, activityRecords(ALONE, today, 'w', zipf(LISTS, 12)));
  const pct = (v: number) => `${Math.round(v * 100)}%`;
  rows.push([
    `the pipeline alone (dating + store, no HTTP), ${ALONE / 1000}k more records over the ${LISTS.toLocaleString('en-US')} lists`,
    `${rate(manyAlone.rate)} records/s (${pct(manyAlone.recompute)} of it the day recompute)`,
    `one list: ${rate(oneAlone.rate)} records/s (${pct(oneAlone.recompute)}) (${pct(manyAlone.rate / oneAlone.rate)})`,
    '',
    '(the limit: the engine statements of a write)',
  ]);
  const perBatch = (a: AloneRun) =>
    `${rate(a.scopeRows)} rows (${(a.scopeRows / BODY_RECORDS).toFixed(2)} per record): recompute ${fmt(a.recomputeMs)} ms in the run, ${fmt(a.againMs)} ms run again alone; the rows' insert alone ${fmt(a.insertAloneMs)} ms`;
  rows.push([
    `the day recompute of one ${BODY_RECORDS / 1000}k-record batch of those: the answer rows it writes; its time in the run, and the engine alone running the last batch's statement again (idle, its parts written) and inserting as many rows into a copy of daily_scopes (medians of 3)`,
    perBatch(manyAlone),
    `one list: ${perBatch(oneAlone)}`,
    '',
    '(the limit by itself: the rows the precomputed answers need)',
  ]);
  for (const t of ['daily_sets', 'daily_scopes']) await many.db.command(`OPTIMIZE TABLE ${t} FINAL`);
  const oneP50 = percentile(oneStats, 50);
  for (const [name, listId] of [
    ['the busiest list (~10% of the records)', 1],
    ['a list of rank 100 (~0.1%)', 100],
  ] as const) {
    const times = await distinctStats(many, listId, today, runs);
    const p50 = percentile(times, 50);
    rows.push([
      `distinct stats (answer cache off), ${name}, p50 / p99 ms`,
      `${fmt(p50)} / ${fmt(percentile(times, 99))}`,
      `one list (${total / 1e6}M records): ${fmt(oneP50)} / ${fmt(percentile(oneStats, 99))}`,
      `p50 ≤ ${TARGET.statsP50Over}× one list's`,
      p50 <= TARGET.statsP50Over * oneP50 ? 'met' : '**missed**',
    ]);
  }
  // The shape no longer precomputed: its reads, busiest list against the one list.
  const manyPairs = await pairReads(many, 1, today, runs);
  const p = (t: number[]) => `${fmt(percentile(t, 50))} / ${fmt(percentile(t, 99))}`;
  rows.push(
    [
      'distinct stats of one workflow with a trigger only (answered from daily_sets), the busiest list, p50 / p99 ms',
      p(manyPairs.http),
      `one list: ${p(onePairs.http)}`,
      '',
      '(reported)',
    ],
    [
      'the same queries, the engine statement alone (held rows off), the busiest list, p50 / p99 ms',
      p(manyPairs.engine),
      `one list: ${p(onePairs.engine)}`,
      '',
      '(reported)',
    ],
    [
      "a list's held day rows read whole (listScopes), then its (workflow, trigger) rows at a first such ask (listPairs, from daily_sets), the busiest list, medians of 5, ms",
      `${fmt(percentile(manyPairs.load, 50))}, then ${fmt(percentile(manyPairs.pairs, 50))}`,
      `one list: ${fmt(percentile(onePairs.load, 50))}, then ${fmt(percentile(onePairs.pairs, 50))}`,
      '',
      '(reported)',
    ],
  );
  await many.close();
  // BENCH_TENANTS_EMBEDDED_ONLY=1: the embedded HTTP, pipeline-alone and stats rows alone (no Kafka, no
  // server mode), for quick iterations on the write and read of the answer rows.
  if (process.env.BENCH_TENANTS_EMBEDDED_ONLY === '1')
    return table(['path', 'measured', 'peer (same run)', 'target', 'verdict'], rows);

  // Over Kafka: the same pair, the worker as its own process (as bench/kafka.ts runs it), one list
  // first, then the 10,000 lists drawn by the same Zipf sequence as the HTTP row.
  const broker = await benchBroker();
  let oneK: Awaited<ReturnType<typeof kafkaRun>>;
  let manyK: Awaited<ReturnType<typeof kafkaRun>>;
  try {
    oneK = await kafkaRun(broker.brokers, 1, total, today, () => BENCH.listId);
    manyK = await kafkaRun(broker.brokers, LISTS, total, today, zipf(LISTS, 11));
  } finally {
    await broker.stop();
  }
  const kafkaRows = [
    [
      `catalog of ${LISTS.toLocaleString('en-US')} lists (the same ${manyK.catalog.records.toLocaleString('en-US')} records), Kafka catalog topic → worker`,
      `${rate(manyK.catalog.e2e)} records/s (from spawn ${rate(manyK.catalog.e2eFromSpawn)})`,
      '',
      '',
      '(reported)',
    ],
    [
      `${total / 1e6}M records over ${LISTS.toLocaleString('en-US')} lists (Zipf), Kafka → worker → store`,
      `${rate(manyK.e2e)} records/s (from spawn ${rate(manyK.e2eFromSpawn)})`,
      `one list: ${rate(oneK.e2e)} records/s (from spawn ${rate(oneK.e2eFromSpawn)}) (${pct(manyK.e2e / oneK.e2e)})`,
      `≥ ${TARGET.ingestShare * 100}% of one list`,
      manyK.e2e >= TARGET.ingestShare * oneK.e2e ? 'met' : '**missed**',
    ],
  ];
  // Each Kafka row beside its HTTP row: catalog, then ingest.
  rows.splice(2, 0, kafkaRows[1]!);
  rows.splice(1, 0, kafkaRows[0]!);
  // Server mode: the same HTTP pair on a real ClickHouse server, beside the embedded rates above.
  const server = await serverModeRun(total, today, zipf(LISTS, 11));
  rows.splice(4, 0, ...serverRows(server, { one: oneRate, many: manyRate }, total));
  return [
    `Many tenants, embedded store, each row against its one-list peer measured in this same run (a fresh service each). Records: the stats bench's ${total / 1e6}M records (bench/stats-data.ts), their list drawn by Zipf's law (s = 1) over ${LISTS.toLocaleString('en-US')} lists; the one-list peer sends the same records to one list. Bodies of ${BODY_RECORDS.toLocaleString('en-US')} records, sequential; their rate is records over the time spent in requests. Kafka rows: a local KRaft broker, ${PARTITIONS}-partition topics; the catalog produced first, read by the worker as its own process (a fresh data directory, \`node --import tsx main.ts\`) until stored and committed; then the same records (keyed as bench/kafka.ts keys them) on the events topic, read by the worker started again on that directory. Records/s from the first record counted to the last (the streaming rate; "from spawn" adds process start and group join), counted through the worker's /metrics (mailstats_ingest_records_accepted_total{source="kafka"}, incremented once a chunk's write resolved; none dead-lettered) every 0.25 s; at the end list 1's stats must hold exactly the records sent to it. Distinct stats: ${runs} sequential requests after 20 warm-ups, each a different query (random 7–120-day periods over all workflows, one workflow or a 2–5-workflow subset, a quarter with a trigger; as the stats mix), after \`OPTIMIZE … FINAL\`. Server mode rows: the same POST /ingest pair (fresh databases, the service in the bench process as in the embedded rows) on a real ClickHouse server started by scripts/clickhouse-server.mjs on this machine, run after the embedded and Kafka rows.`,
    '',
    table(['path', 'measured', 'peer (same run)', 'target', 'verdict'], rows),
  ].join('\n');
}
