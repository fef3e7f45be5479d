import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../scripts/kafka/broker.mjs';
import { benchBroker, committedToEnd, createTopics, deleteTopics, produce } from './kafka-e2e.js';
import { addDays, localDate, toDayNumber } from '../shared/dates.js';
import { loadConfig } from '../shared/config.js';
import { READ_SETTINGS, statsSql, type StatsQuery } from '../shared/clickhouse/stats-store.js';
import { checkRecord, type MailstatsRecord } from '../shared/records/index.js';
import { startService, type Service } from '../service/start.js';
import { rng } from './stats-data.js';
import { cannon } from './stats-mix.js';
import { catalogBodies, post, zipf } from './tenants.js';
import { bareRoute, percentile, table } from './support.js';

/**
 * Waits until the service has no background read of a list into its stats memory in flight
 * (`mailstats_stats_memory_reads` 0): the rows and sets a warm-up asked for are held (at 100M records a
 * year of the busiest list's sets took longer than the fixed 2 s waits this replaced, so its first
 * answers read the engine).
 */
async function heldSettled(url: string): Promise<void> {
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    const text = await (await fetch(`${url}/metrics`)).text();
    const reads = /^mailstats_stats_memory_reads (\S+)$/m.exec(text);
    if (!reads) throw new Error('no mailstats_stats_memory_reads on /metrics');
    if (Number(reads[1]) === 0) return;
    if (Date.now() > deadline) throw new Error('the stats memory still reading after 10 minutes');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * The growth bench (docs: BENCHMARKS.md "Growth"): one store filled in steps, measured at each step.
 * Steps from BENCH_GROWTH_STEPS (comma-separated record counts), default 1M and 3M (CI's size); the
 * 10M and 100M steps run on demand: BENCH_GROWTH_STEPS=1000000,3000000,10000000.
 */
const STEPS = (process.env.BENCH_GROWTH_STEPS ?? '1000000,3000000').split(',').map(Number);
/** Lists, drawn by Zipf's law (s = 1): the busiest has ~10% of the records. */
const LISTS = 10_000;
const WORKFLOWS = 50;
const TRIGGERS = 3;
const SUBSCRIBERS = 200_000;
const DAYS = 400;
const DUPLICATES = 0.05;
const KEY = 'bench-key';
const TOKEN = 'bench-ingest-token-0123456789abcdef';
/** Records per pipeline write while filling (as POST /ingest's largest bodies hand them over). */
const FILL_BATCH = 75_000;
/** Records of the next chunk sent through POST /ingest at each step (25k-line bodies), timed. */
const PROBE = Number(process.env.BENCH_GROWTH_PROBE) || 200_000;
const PROBE_BODY = 25_000;
/** Records dated today sent through Kafka at each step (a live stream), timed to their last commit. */
const KAFKA_PROBE = Number(process.env.BENCH_GROWTH_KAFKA_PROBE) || 200_000;
const KAFKA_GROUP = 'mailstats-growth';
/** The retention measured after the last step (disk kept, answers compared before and after). */
const RETENTION_DAYS = 90;
const CONNECTIONS = 8;
const SECONDS = 10;
const TARGET = { ingestShare: 0.9, distinctShare: 0.5, p99: 50, rssBytes: 2 ** 30, readySeconds: 30 };
const BUSIEST = 1;
/**
 * The median list by records: half of all records are in busier lists (Zipf, s = 1: H(k) = H(LISTS) / 2,
 * rank ~75 of 10,000, ~0.15% of the records). The median list by count (rank 5,000) holds ~0.002%: a
 * few dozen records at 1M.
 */
const MEDIAN = 75;

const rate = (n: number) => Math.round(n).toLocaleString('en-US');

/**
 * `count` activity records over the last `days` days (DAYS: the backfill's; 1: today's, a live stream),
 * in time order, each list drawn by Zipf, 5% of them a copy of a recent record (a producer's retry:
 * same id, same content), in arrays of `size`.
 */
function* activity(
  count: number,
  size: number,
  prefix: string,
  today: string,
  seed: number,
  days = DAYS,
): Generator<MailstatsRecord[]> {
  const rnd = rng(seed);
  const listOf = zipf(LISTS, seed + 1);
  const first = toDayNumber(today) - days + 1;
  const recent: MailstatsRecord[] = [];
  let batch: MailstatsRecord[] = [];
  for (let i = 0; i < count; i++) {
    let record: MailstatsRecord;
    if (recent.length > 0 && rnd() < DUPLICATES) record = recent[Math.floor(rnd() * recent.length)]!;
    else {
      const dayNumber = first + Math.floor((i * days) / count);
      const pick = rnd();
      const type = pick < 0.5 ? 'send' : pick < 0.8 ? 'open' : pick < 0.98 ? 'click' : 'purchase';
      const base = {
        type,
        event_id: `${prefix}${i}`,
        list_id: listOf(),
        workflow_id: 1 + Math.floor(rnd() * WORKFLOWS),
        trigger_id: 1 + Math.floor(rnd() * TRIGGERS),
        subscriber_id: 1 + Math.floor(rnd() * SUBSCRIBERS),
        timestamp: dayNumber * 86_400_000 + 43_200_000 + Math.floor(rnd() * 3_600_000),
      };
      const raw =
        type === 'purchase'
          ? { ...base, order_id: `o${prefix}${i}`, value_ron: (rnd() * 500).toFixed(2), value_eur: '9.5' }
          : base;
      const check = checkRecord(raw);
      if (!check.ok) throw new Error(check.reason);
      record = check.record;
      if (recent.length < 10_000) recent.push(record);
      else recent[i % 10_000] = record;
    }
    batch.push(record);
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length) yield batch;
}

/**
 * `n` distinct queries of one list over periods of `length` days ending within the loaded days: all
 * workflows, one workflow, or 2–5 workflows, a quarter with a trigger (the stats mix's shapes).
 */
function distinctQueries(list: number, length: number, today: string, n: number, seed: number): StatsQuery[] {
  const rnd = rng(seed);
  const seen = new Set<string>();
  const out: StatsQuery[] = [];
  for (let tries = 0; out.length < n && tries < n * 20; tries++) {
    const to = addDays(today, -Math.floor(rnd() * (DAYS - length)));
    const kind = rnd();
    let workflowIds: number[] | null = null;
    if (kind >= 0.3) {
      const k = kind < 0.6 ? 1 : 2 + Math.floor(rnd() * 4);
      const ids = new Set<number>();
      while (ids.size < k) ids.add(1 + Math.floor(rnd() * WORKFLOWS));
      workflowIds = [...ids];
    }
    const triggerId = rnd() < 0.25 ? 1 + Math.floor(rnd() * TRIGGERS) : null;
    const q: StatsQuery = { listId: list, workflowIds, triggerId, from: addDays(to, -(length - 1)), to };
    const key = JSON.stringify(q);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(q);
  }
  return out;
}

const pathOf = (q: StatsQuery) =>
  `/api/1.2/rest/1/${KEY}/automation.stats.json?list_id=${q.listId}&start_date=${q.from}&stop_date=${q.to}` +
  (q.workflowIds ? `&workflow_ids=${q.workflowIds.join(',')}` : '') +
  (q.triggerId !== null ? `&trigger_id=${q.triggerId}` : '');

/** The engine alone: `CONNECTIONS` callers running the queries' single statements for SECONDS. */
async function engineAlone(svc: Service, queries: StatsQuery[]) {
  const gens = new Map<number, number>();
  for (const list of new Set(queries.map((q) => q.listId))) gens.set(list, await genOf(svc, list));
  const times: number[] = [];
  let next = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        const q = queries[next++ % queries.length]!;
        const { sql, params } = statsSql(q, gens.get(q.listId));
        const t = performance.now();
        await svc.db.read(sql, params, READ_SETTINGS);
        times.push(performance.now() - t);
      }
    }),
  );
  times.sort((a, b) => a - b);
  return { rate: times.length / SECONDS, p50: percentile(times, 50), p99: percentile(times, 99) };
}

/**
 * The service in this process on `dir` (filling, the engine-alone rows, the store's sizes), with
 * `env` on top (the retention row's RAW_RETENTION_DAYS).
 */
async function inProcess(dir: string, env: Record<string, string> = {}): Promise<Service> {
  return startService(
    loadConfig({
      DATA_DIR: dir,
      PORT: '0',
      SEED_DEMO: 'false',
      LOG_LEVEL: 'warn',
      INGEST_TOKEN: TOKEN,
      KAFKA_BROKERS: '',
      CLICKHOUSE_URL: '',
      ...env,
    }),
  );
}

/** The bench's broker and topics: the spawned service consumes them (its Kafka probe). */
interface GrowthKafka {
  brokers: string;
  events: string;
  catalog: string;
  dlq: string;
}

/** KiB fields of /proc/PID/status (VmRSS, VmHWM) in bytes. */
function memoryOf(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) * 1024;
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/**
 * The service as its own process (`node --import tsx main.ts`, default settings) on `dir`, and the
 * seconds from its spawn to /readyz 200. With `kafka`, it consumes the bench's topics (and its POST
 * /ingest would publish to them instead of writing: docs/api.md "POST /ingest").
 */
async function spawned(dir: string, kafka?: GrowthKafka) {
  const port = await freePort();
  const t = performance.now();
  const child = spawn(
    process.execPath,
    ['--disable-warning=TimeoutNegativeWarning', '--import', 'tsx', 'main.ts'],
    {
      cwd: resolve(import.meta.dirname, '..'),
      env: {
        ...process.env,
        DATA_DIR: dir,
        PORT: String(port),
        SEED_DEMO: 'false',
        LOG_LEVEL: 'warn',
        INGEST_TOKEN: TOKEN,
        KAFKA_BROKERS: kafka?.brokers ?? '',
        ...(kafka && {
          KAFKA_EVENTS_TOPIC: kafka.events,
          KAFKA_CATALOG_TOPIC: kafka.catalog,
          KAFKA_DLQ_TOPIC: kafka.dlq,
          KAFKA_GROUP_ID: KAFKA_GROUP,
        }),
        CLICKHOUSE_URL: '',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  let gone = false;
  const exited = new Promise<void>((r) =>
    child.once('exit', () => {
      gone = true;
      r();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    if (gone) throw new Error(`the service exited (code ${child.exitCode}) before it was ready`);
    const status = await fetch(`${url}/readyz`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) break;
    if (performance.now() - t > 600_000) throw new Error('the service was not ready within 600 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  const ready = (performance.now() - t) / 1000;
  const stop = async () => {
    if (!gone) child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(killer);
  };
  return { url, pid: child.pid!, ready, stop };
}

/** Sequential POST /ingest of `bodies`; records/s over the time spent in requests. */
async function postBodies(url: string, bodies: Iterable<string>): Promise<number> {
  let records = 0;
  let ms = 0;
  for (const body of bodies) {
    const t = performance.now();
    const res = await fetch(`${url}/ingest`, {
      method: 'POST',
      body,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson' },
    });
    const answer = (await res.json()) as { accepted: number; rejected: unknown[] };
    ms += performance.now() - t;
    if (res.status !== 200 || answer.rejected.length > 0)
      throw new Error(`ingest answered ${res.status}: ${JSON.stringify(answer).slice(0, 300)}`);
    records += answer.accepted;
  }
  return records / (ms / 1000);
}

interface Step {
  size: number;
  stored: number;
  fill: number;
  /** Records/s: POST /ingest of records over all DAYS (a backfill), of today's; Kafka, today's. */
  ingest: number;
  ingestToday: number;
  kafka: number;
  ready: number;
  redate: number;
  rss: number;
  peak: number;
  rssAfterIngest: number;
  /** The service consuming Kafka, after its records (VmRSS, VmHWM). */
  worker: { rss: number; peak: number };
  busiestRecords: number;
  medianRecords: number;
  disk: { table: string; bytes: number; rows: number; parts: number }[];
  rows: {
    name: string;
    api: { rate: number; p50: number; p99: number };
    engine: { rate: number; p50: number; p99: number };
    /** A bare Express route sending one of the row's answers (`bytes` long), the same connections. */
    ceiling: { rate: number; p99: number; bytes: number };
  }[];
}

const TABLES = [
  'events',
  'daily_sets',
  'recent_sets',
  'daily_scopes',
  'event_ids',
  'list_dating',
  'erasures',
  'list_changes',
  'catalog',
];

type Disk = { table: string; bytes: number; rows: number; parts: number }[];

/** Each table's active parts (`system.parts`). */
const diskOf = (svc: Service): Promise<Disk> =>
  svc.db.query(
    `SELECT table, sum(bytes_on_disk) AS bytes, sum(rows) AS rows, count() AS parts FROM system.parts
     WHERE active AND database = currentDatabase() AND table IN {tables:Array(String)} GROUP BY table`,
    { tables: TABLES },
    READ_SETTINGS,
  );

/** The list's done dating generation (the stats statements read that generation's sets). */
async function genOf(svc: Service, list: number): Promise<number> {
  const [row] = await svc.db.query<{ gen: number }>(
    'SELECT max(gen) AS gen FROM list_dating WHERE list_id = {list:UInt64} AND done = 1',
    { list },
    { output_format_json_quote_64bit_integers: 0 },
  );
  return row?.gen ?? 0;
}

/**
 * The engine's answers (the stats statements themselves) for the busiest and the median list over all
 * loaded days: all workflows, three, one with a trigger; compared across the retention.
 */
async function answersOf(svc: Service, today: string): Promise<unknown[]> {
  const from = addDays(today, -DAYS);
  const out: unknown[] = [];
  for (const listId of [BUSIEST, MEDIAN]) {
    const gen = await genOf(svc, listId);
    for (const [workflowIds, triggerId] of [
      [null, null],
      [[1, 2, 3], null],
      [[7], 2],
    ] as const) {
      const q: StatsQuery = {
        listId,
        workflowIds: workflowIds && [...workflowIds],
        triggerId,
        from,
        to: today,
      };
      const { sql, params } = statsSql(q, gen);
      out.push(await svc.db.read(sql, params, READ_SETTINGS));
    }
  }
  return out;
}

/**
 * RAW_RETENTION_DAYS on the filled store: the engine's TTL applied now (MATERIALIZE TTL; by default
 * merges apply it as they go), each table's disk before and after, and the answers before and after,
 * which must be identical (docs/lifecycle.md "Retention": answers are read from the derived state).
 */
async function retention(dir: string, today: string) {
  let svc = await inProcess(dir);
  const before = await answersOf(svc, today);
  const kept = await diskOf(svc);
  await svc.close();
  svc = await inProcess(dir, { RAW_RETENTION_DAYS: String(RETENTION_DAYS) });
  try {
    await svc.recovered; // the start-up recovery sets the TTL
    const t = performance.now();
    await svc.db.command('ALTER TABLE events MATERIALIZE TTL', {}, { mutations_sync: '2' });
    const seconds = (performance.now() - t) / 1000;
    const after = await answersOf(svc, today);
    const days = (a: unknown[]) => a.reduce<number>((n, rows) => n + (rows as unknown[]).length, 0);
    if (JSON.stringify(after) !== JSON.stringify(before))
      throw new Error(`answers changed across RAW_RETENTION_DAYS=${RETENTION_DAYS}`);
    return { kept, disk: await diskOf(svc), seconds, answers: before.length, days: days(before) };
  } finally {
    await svc.close();
  }
}

export async function growthBench(): Promise<string> {
  // BENCH_GROWTH_KEEP=1: the store is left on disk (its path printed) to look into after the run.
  const keep = process.env.BENCH_GROWTH_KEEP === '1';
  const dir = mkdtempSync(join(tmpdir(), 'mailstats-bench-growth-'));
  const today = localDate(Date.now(), 'Europe/Bucharest');
  const steps: Step[] = [];
  let sent = 0;
  let zone = 'Europe/Bucharest';
  const broker = await benchBroker();
  const run = Date.now();
  const kafka: GrowthKafka = {
    brokers: broker.brokers,
    events: `growth-events-${run}`,
    catalog: `growth-catalog-${run}`,
    dlq: `growth-dlq-${run}`,
  };
  await createTopics(kafka.brokers, [kafka.events, kafka.catalog, kafka.dlq], 3);
  let kept: Awaited<ReturnType<typeof retention>> | undefined;
  try {
    for (const [k, size] of STEPS.entries()) {
      // Fill through the pipeline (dedup, dating, day recompute), in this process.
      const svc = await inProcess(dir);
      if (k === 0) await post(svc, catalogBodies(LISTS));
      const t = performance.now();
      let filled = 0;
      for (const batch of activity(size - sent, FILL_BATCH, `g${k}-`, today, 100 + k)) {
        await svc.pipeline.write(batch);
        filled += batch.length;
      }
      const fill = filled / ((performance.now() - t) / 1000);
      sent = size;
      console.error(`growth bench: ${size} records sent, ${rate(fill)}/s through the pipeline`);
      const count = async (where: string) =>
        (await svc.db.query<{ n: number }>(`SELECT count() AS n FROM events ${where}`, {}, READ_SETTINGS))[0]!
          .n;
      const stored = await count('');
      const busiestRecords = await count(`WHERE list_id = ${BUSIEST}`);
      const medianRecords = await count(`WHERE list_id = ${MEDIAN}`);
      const disk = await diskOf(svc);
      // The distinct query sets, and the engine alone running their statements (this process).
      const sets = [BUSIEST, MEDIAN].flatMap((list) =>
        [30, 365].map((days) => ({
          name: `${list === BUSIEST ? 'busiest' : 'median'} list, ${days} days`,
          queries: distinctQueries(list, days, today, 30_000, 7 * list + days + k),
        })),
      );
      const engine = [];
      for (const s of sets) engine.push(await engineAlone(svc, s.queries));
      await svc.close();

      // The service as its own process, default settings: start, distinct answers, memory, ingest.
      const api = await spawned(dir);
      console.error(`growth bench: ready in ${api.ready.toFixed(1)} s at ${size}`);
      const rows: Step['rows'] = [];
      try {
        for (const [i, s] of sets.entries()) {
          // A dashboard has asked for the list before, over the days the row's queries cover: its rows,
          // and its sets of those days' months, are read (background) first.
          const list = s.queries[0]!.listId;
          const first = s.queries.reduce((min, q) => (q.from < min ? q.from : min), today);
          const span = `start_date=${first}&stop_date=${today}`;
          for (const warm of [span, `${span}&workflow_ids=1,2`, `${span}&workflow_ids=1&trigger_id=1`]) {
            await (
              await fetch(`${api.url}/api/1.2/rest/1/${KEY}/automation.stats.json?list_id=${list}&${warm}`)
            ).arrayBuffer();
            await heldSettled(api.url);
          }
          const c = await cannon(api.url, s.queries.map(pathOf), CONNECTIONS);
          // What sending such an answer costs alone: one of the row's answers from a bare Express route.
          const body = Buffer.from(await (await fetch(`${api.url}${pathOf(s.queries[0]!)}`)).arrayBuffer());
          const bare = await bareRoute(body);
          const b = await cannon(bare.origin, ['/fixed'], CONNECTIONS).finally(bare.close);
          rows.push({
            name: s.name,
            api: { rate: c.requests.total / SECONDS, p50: c.latency.p50, p99: c.latency.p99 },
            engine: engine[i]!,
            ceiling: { rate: b.requests.total / SECONDS, p99: b.latency.p99, bytes: body.length },
          });
        }
        const { rss, peak } = memoryOf(api.pid);
        // The list re-dating of the busiest list (a time-zone change), timed through POST /ingest.
        zone = zone === 'Europe/Bucharest' ? 'Europe/London' : 'Europe/Bucharest';
        let r = performance.now();
        await postBodies(api.url, [
          JSON.stringify({ type: 'list', list_id: BUSIEST, name: `list ${BUSIEST}`, timezone: zone }),
        ]);
        const redate = (performance.now() - r) / 1000;
        // The next chunk's first records through POST /ingest (they count toward the next step): spread
        // over all DAYS as the fill's (a backfill), then today's (a live stream).
        const ndjson = (batches: Iterable<MailstatsRecord[]>) =>
          [...batches].map((b) => b.map((x) => JSON.stringify(x)).join('\n'));
        const ingest = await postBodies(
          api.url,
          ndjson(activity(PROBE, PROBE_BODY, `p${k}-`, today, 900 + k)),
        );
        const ingestToday = await postBodies(
          api.url,
          ndjson(activity(PROBE, PROBE_BODY, `t${k}-`, today, 1900 + k, 1)),
        );
        sent += PROBE;
        const after = memoryOf(api.pid);
        await api.stop();
        // Today's records through Kafka, keyed by list as mailstats' producers do (docs/records.md), to
        // the service started again consuming the bench's topics: from the first send (once it is ready)
        // to the group's last commit, the broker's work and the service's on the same 2 cores.
        const worker = await spawned(dir, kafka);
        const messages = [...activity(KAFKA_PROBE, 10_000, `q${k}-`, today, 2900 + k, 1)].map((b) =>
          b.map((x) => ({ key: 'list_id' in x ? String(x.list_id) : null, value: JSON.stringify(x) })),
        );
        r = performance.now();
        let kafkaRate: number;
        let workerMemory: { rss: number; peak: number };
        try {
          await produce(kafka.brokers, kafka.events, messages);
          while (!(await committedToEnd(kafka.brokers, KAFKA_GROUP, kafka.events)))
            await new Promise((res) => setTimeout(res, 200));
          kafkaRate = KAFKA_PROBE / ((performance.now() - r) / 1000);
          workerMemory = memoryOf(worker.pid);
        } finally {
          await worker.stop();
        }
        steps.push({
          size,
          stored,
          fill,
          ingest,
          ingestToday,
          kafka: kafkaRate,
          ready: api.ready,
          redate,
          rss,
          peak: Math.max(peak, after.peak),
          rssAfterIngest: after.rss,
          worker: workerMemory,
          busiestRecords,
          medianRecords,
          disk,
          rows,
        });
      } finally {
        await api.stop();
      }
      console.error(`growth bench: step ${size} measured`);
      console.error(report(steps)); // so far: a later step's failure does not lose this one's rows
    }
    kept = await retention(dir, today);
    console.error(`growth bench: RAW_RETENTION_DAYS=${RETENTION_DAYS} measured`);
  } finally {
    await deleteTopics(kafka.brokers, [kafka.events, kafka.catalog, kafka.dlq]).catch(() => undefined);
    await broker.stop();
    if (keep) console.error(`growth bench: the store is kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
  return report(steps, kept);
}

const mib = (b: number) => `${Math.round(b / 2 ** 20)} MiB`;

function report(steps: Step[], kept?: Awaited<ReturnType<typeof retention>>): string {
  const base = steps[0]!;
  const verdict = (ok: boolean, limit = '') => (ok ? 'met' : `**missed**${limit ? ` (${limit})` : ''}`);
  const perStep: (string | number)[][] = [];
  for (const s of steps) {
    const label = `${s.size / 1e6}M`;
    const ingestRows = [
      [
        'ingest, POST /ingest, a backfill (next records over all days, 25k-line bodies)',
        s.ingest,
        base.ingest,
      ],
      ["ingest, POST /ingest, today's records (25k-line bodies)", s.ingestToday, base.ingestToday],
      [
        `ingest, Kafka, today's records (${rate(KAFKA_PROBE)}, keyed by list; first send to last commit)`,
        s.kafka,
        base.kafka,
      ],
    ] as const;
    for (const [name, value, first] of ingestRows)
      perStep.push([
        label,
        name,
        `${rate(value)}/s (${Math.round((100 * value) / first)}% of the first step)`,
        `≥ ${TARGET.ingestShare * 100}% of the first step`,
        verdict(value >= TARGET.ingestShare * first),
      ]);
    for (const [i, r] of s.rows.entries()) {
      const b = base.rows[i]!;
      const ok = r.api.rate >= TARGET.distinctShare * b.api.rate && r.api.p99 <= TARGET.p99;
      perStep.push([
        label,
        `distinct answers, ${r.name}, ${CONNECTIONS} connections`,
        `${rate(r.api.rate)}/s, p50 ${r.api.p50} ms, p99 ${r.api.p99} ms (${Math.round((100 * r.api.rate) / b.api.rate)}%); engine alone ${rate(r.engine.rate)}/s, p50 ${r.engine.p50.toFixed(1)} ms, p99 ${r.engine.p99.toFixed(1)} ms; bare Express sending one such answer (${Math.round(r.ceiling.bytes / 1024)} KB) ${rate(r.ceiling.rate)}/s, p99 ${r.ceiling.p99} ms`,
        `≥ ${TARGET.distinctShare * 100}% of the first step, p99 ≤ ${TARGET.p99} ms`,
        verdict(
          ok,
          r.api.rate < r.engine.rate * 1.2
            ? 'at the engine alone'
            : r.ceiling.p99 > TARGET.p99 || r.api.rate >= 0.8 * r.ceiling.rate
              ? 'near a bare route sending the same bytes'
              : '',
        ),
      ]);
    }
    perStep.push([
      label,
      'API process memory (RSS after the answers; after the ingest; peak)',
      `${mib(s.rss)}; ${mib(s.rssAfterIngest)}; ${mib(s.peak)}`,
      '≤ 1 GiB',
      verdict(Math.max(s.rss, s.rssAfterIngest) <= TARGET.rssBytes),
    ]);
    perStep.push([
      label,
      'the same service consuming Kafka, memory after its records (RSS; peak)',
      `${mib(s.worker.rss)}; ${mib(s.worker.peak)}`,
      '',
      '',
    ]);
    perStep.push([
      label,
      'time to ready (spawn to /readyz 200)',
      `${s.ready.toFixed(1)} s`,
      `≤ ${TARGET.readySeconds} s`,
      verdict(s.ready <= TARGET.readySeconds),
    ]);
    perStep.push([
      label,
      `re-dating of the busiest list (${rate(s.busiestRecords)} raw records; the POST that changes its zone)`,
      `${s.redate.toFixed(1)} s`,
      '',
      '',
    ]);
  }
  const diskRows = steps.flatMap((s) =>
    [...s.disk]
      .sort((a, b) => b.bytes - a.bytes)
      .map((d) => [
        `${s.size / 1e6}M`,
        d.table,
        rate(d.rows),
        d.parts,
        mib(d.bytes),
        (d.bytes / s.stored).toFixed(1),
      ]),
  );
  return [
    `One store (embedded) filled in steps; ${LISTS.toLocaleString('en-US')} lists drawn by Zipf's law (s = 1: the busiest list ~10% of the records; the median list by records, half of them in busier lists, is rank ${MEDIAN}), ${WORKFLOWS} workflows, ${TRIGGERS} triggers, ${SUBSCRIBERS / 1000}k subscribers, ${DAYS} days in time order, ${DUPLICATES * 100}% duplicates (a recent record sent again). Filled through the pipeline in this process (dedup, dating, day recompute; ${FILL_BATCH.toLocaleString('en-US')}-record writes). At each step the service runs as its own process (\`node --import tsx main.ts\`, default settings) on that store: time to ready; distinct answers (autocannon, ${CONNECTIONS} connections, ${SECONDS} s; each request a query never asked before: a period of the row's length ending anywhere in the loaded days, all workflows / one workflow / 2–5 workflows, a quarter with a trigger), after the list was asked once over the days the row's queries cover (its held rows and those days' sets read); its memory (/proc VmRSS, VmHWM: the embedded engine is in the process); a re-dating of the busiest list; then through POST /ingest ${PROBE.toLocaleString('en-US')} records of the next chunk spread over all days (a backfill) and ${PROBE.toLocaleString('en-US')} dated today (a live stream), and ${KAFKA_PROBE.toLocaleString('en-US')} dated today through Kafka, to the service started again consuming a local Apache Kafka broker's topics (produced as fast as the broker takes them, timed from the first send to the group's last commit). Beside each distinct row, a bare Express route (in the bench process) sending one of the row's answers, ${CONNECTIONS} connections, ${SECONDS} s: what the answer's size costs alone. The engine alone: the same queries' single statements, ${CONNECTIONS} callers on the read connections, in the bench process on the same store. Targets are against the first step.`,
    '',
    `Steps: ${steps.map((s) => `${s.size / 1e6}M sent (${rate(s.stored)} stored; busiest list ${rate(s.busiestRecords)}, median ${rate(s.medianRecords)}; filled at ${rate(s.fill)}/s)`).join('; ')}.`,
    '',
    table(['step', 'row', 'measured', 'target', 'verdict'], perStep),
    '',
    'Disk per table (active parts, `system.parts`), bytes per stored raw record:',
    '',
    table(['step', 'table', 'rows', 'parts', 'on disk', 'bytes / raw record'], diskRows),
    ...(kept ? ['', ...retentionReport(kept)] : []),
  ].join('\n');
}

function retentionReport(r: Awaited<ReturnType<typeof retention>>): string[] {
  const total = (d: Disk) => d.reduce((n, t) => n + t.bytes, 0);
  const byTable = new Map(r.disk.map((t) => [t.table, t]));
  const rows = [...r.kept]
    .sort((a, b) => b.bytes - a.bytes)
    .map((t) => {
      const after = byTable.get(t.table);
      return [t.table, mib(t.bytes), after ? `${mib(after.bytes)} (${rate(after.rows)} rows)` : '0 MiB'];
    });
  rows.push(['all', mib(total(r.kept)), mib(total(r.disk))]);
  const raw = r.kept.find((t) => t.table === 'events')?.rows ?? 0;
  const perRecord = (d: Disk) => (total(d) / raw).toFixed(1);
  return [
    `Raw-event retention on the last step's store: \`RAW_RETENTION_DAYS=${RETENTION_DAYS}\` set and applied at once (\`ALTER TABLE events MATERIALIZE TTL\`, ${r.seconds.toFixed(1)} s; by default merges apply it as they go). ${r.answers} answers (the busiest and the median list over all ${DAYS} days: all workflows, three, one with a trigger; ${rate(r.days)} day rows) read by the stats statements before and after: identical. Disk ${perRecord(r.kept)} → ${perRecord(r.disk)} bytes per raw record (the ${rate(raw)} stored before):`,
    '',
    table(['table', 'everything kept', `RAW_RETENTION_DAYS=${RETENTION_DAYS}`], rows),
  ];
}
