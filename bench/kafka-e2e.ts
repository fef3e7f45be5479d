/**
 * Shared by the Kafka benches (bench/kafka.ts, bench/tenants.ts): the broker, topics, producing, and
 * one end-to-end run of the worker as its own process (`node --import tsx main.ts` with KAFKA_* env)
 * with its memory sampled. Bench-only code: nothing here is used by the service.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Message } from 'kafkajs';
import { BENCH } from './stats-data.js';
import { freePort, startKafkaBroker } from '../scripts/kafka/broker.mjs';

export const fmtRate = (n: number) => Math.round(n).toLocaleString('en-US');

export interface KafkaTopics {
  events: string;
  catalog: string;
  dlq: string;
}

/** The broker of a bench: KAFKA_BROKERS when set (reused, left running), else a local one started here. */
export async function benchBroker(): Promise<{ brokers: string; stop: () => Promise<void> }> {
  if (process.env.KAFKA_BROKERS) return { brokers: process.env.KAFKA_BROKERS, stop: async () => undefined };
  const broker = await startKafkaBroker();
  return { brokers: broker.brokers, stop: () => broker.stop() };
}

export const kafkaClient = (brokers: string) =>
  new Kafka({ clientId: 'bench', brokers: [brokers], logLevel: logLevel.NOTHING });

/**
 * Create `topics` and wait until every partition has a leader. kafkajs' own wait (waitForLeaders) gives
 * up on UNKNOWN_TOPIC_OR_PARTITION, which a KRaft broker answers while its metadata catches up (seen
 * right after other topics were deleted): the metadata is polled here instead.
 */
export async function createTopics(brokers: string, topics: string[], partitions: number): Promise<void> {
  const admin = kafkaClient(brokers).admin();
  await admin.connect();
  try {
    await admin.createTopics({
      waitForLeaders: false,
      topics: topics.map((topic) => ({ topic, numPartitions: partitions })),
    });
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const { topics: meta } = await admin.fetchTopicMetadata({ topics });
        if (meta.every((t) => t.partitions.length === partitions && t.partitions.every((p) => p.leader >= 0)))
          return;
      } catch (err) {
        if (Date.now() > deadline) throw err;
      }
      if (Date.now() > deadline) throw new Error(`topics ${topics.join(', ')} have no leaders after 60 s`);
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await admin.disconnect();
  }
}

export async function deleteTopics(brokers: string, topics: string[]): Promise<void> {
  const admin = kafkaClient(brokers).admin();
  await admin.connect();
  try {
    await admin.deleteTopics({ topics });
  } finally {
    await admin.disconnect();
  }
}

/** Produce `batches` to `topic` (acks all, one batch per request, in order); records/s. */
export async function produce(brokers: string, topic: string, batches: Iterable<Message[]>): Promise<number> {
  const producer = kafkaClient(brokers).producer();
  await producer.connect();
  let n = 0;
  let ms = 0;
  try {
    for (const messages of batches) {
      // Only the sends are timed: building the next batch is the bench's work, not the broker's.
      const t = Date.now();
      await producer.send({ topic, acks: -1, messages });
      ms += Date.now() - t;
      n += messages.length;
    }
  } finally {
    await producer.disconnect();
  }
  return n / (Math.max(1, ms) / 1000);
}

/** Whether `group` has committed every partition of `topic` up to its end (all of it stored). */
export async function committedToEnd(brokers: string, group: string, topic: string): Promise<boolean> {
  const admin = kafkaClient(brokers).admin();
  await admin.connect();
  try {
    const ends = await admin.fetchTopicOffsets(topic);
    const [committed] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    const at = new Map(committed?.partitions.map((p) => [p.partition, Number(p.offset)]));
    return ends.every((e) => Number(e.high) === 0 || at.get(e.partition) === Number(e.high));
  } finally {
    await admin.disconnect();
  }
}

/** One value of the worker's Prometheus text (the first sample of `name` with that exact label set). */
export function metric(text: string, name: string, labels = ''): number {
  const escaped = `${name}${labels}`.replace(/[{}]/g, (c) => `\\${c}`);
  return Number(new RegExp(`^${escaped} (\\S+)`, 'm').exec(text)?.[1]);
}

/**
 * The worker's Kafka counters from its /metrics: records consumed and written (counted after the
 * pipeline's write resolved, before the offset commit: ingest/kafka/worker.ts writeChunk) and records
 * dead-lettered. Undefined while the API is not up. Counters start at 0 with each process.
 */
export async function kafkaCounters(
  port: number,
): Promise<{ accepted: number; rejected: number } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    if (res.status !== 200) return undefined;
    const text = await res.text();
    const get = (name: string) => metric(text, name, '{source="kafka"}');
    return {
      accepted: get('mailstats_ingest_records_accepted_total') || 0,
      rejected: get('mailstats_ingest_records_rejected_total') || 0,
    };
  } catch {
    return undefined;
  }
}

/** Median of the second half of a series: the steady value once past start-up. */
export function steadyOf(xs: number[]): number {
  const half = xs.slice(Math.floor(xs.length / 2)).sort((a, b) => a - b);
  return half[Math.floor(half.length / 2)] ?? NaN;
}

export interface EndToEnd {
  /** Records/s from the first poll that counted any record to the last: the streaming rate. */
  e2e: number;
  /** Records/s from the spawn (process start, group join and first fetch included). */
  e2eFromSpawn: number;
  /** RSS samples (MB, /proc every 0.5 s). */
  rss: number[];
  /** V8 heap + external buffers samples (MB, /metrics every 2 s). */
  jsMemory: number[];
  /**
   * The worker process's CPU (all its threads: JS, GC, the embedded engine) per record over the
   * streaming part, µs (/proc/<pid>/stat). On a shared machine rates follow the load; the CPU a record
   * costs follows the code far more closely, so before/after comparisons use it.
   */
  cpuUsPerRecord: number;
  dataDir: string;
}

/** utime + stime of a process in seconds (/proc/<pid>/stat; clock ticks of 1/100 s on Linux). */
function processCpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/**
 * One end-to-end run: the worker as its own process (ROLE=all for its API) on `dataDir` (a fresh one
 * unless given), catching up on its topics in group `group` until `count(port)` reaches `total`; its
 * RSS (from /proc) and its V8 heap + external buffers (from its /metrics) sampled throughout. `count`
 * answers undefined while it cannot tell yet and may throw to end the run (e.g. records dead-lettered);
 * `check` runs once counting is done, before the worker is stopped (SIGTERM: it finishes its batch,
 * commits and leaves the group). `heapMb` caps its V8 old space (--max-old-space-size).
 */
export async function endToEnd(o: {
  brokers: string;
  topics: KafkaTopics;
  total: number;
  group: string;
  count: (port: number) => Promise<number | undefined>;
  check?: (port: number) => Promise<void>;
  dataDir?: string;
  heapMb?: number;
}): Promise<EndToEnd> {
  const port = await freePort();
  const dataDir = o.dataDir ?? mkdtempSync(join(tmpdir(), 'mailstats-kbench-'));
  const spawnedAt = Date.now();
  // BENCH_CPU_PROF_DIR: profile the worker (written when it exits on SIGTERM) to see where its time goes.
  const prof = process.env.BENCH_CPU_PROF_DIR;
  const heap = o.heapMb ? [`--max-old-space-size=${o.heapMb}`] : [];
  const child = spawn(
    process.execPath,
    [...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []), ...heap, '--import', 'tsx', 'main.ts'],
    {
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        PORT: String(port),
        SEED_DEMO: 'false',
        LOG_LEVEL: 'warn',
        KAFKA_BROKERS: o.brokers,
        KAFKA_EVENTS_TOPIC: o.topics.events,
        KAFKA_CATALOG_TOPIC: o.topics.catalog,
        KAFKA_DLQ_TOPIC: o.topics.dlq,
        KAFKA_GROUP_ID: o.group,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  let exited = false;
  const exit = new Promise((r) => child.once('exit', r)).then(() => (exited = true));
  const rss: number[] = [];
  const sampler = setInterval(() => {
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      if (m) rss.push(Number(m[1]) / 1024);
    } catch {
      /* not started yet or gone */
    }
  }, 500);
  // The service's own memory (V8 heap + external buffers) beside the RSS, from its /metrics: what is
  // left of the RSS is the embedded engine (its caches, mapped code) and Node's native runtime.
  const jsMemory: number[] = [];
  const metricsSampler = setInterval(() => {
    fetch(`http://127.0.0.1:${port}/metrics`)
      .then((res) => res.text())
      .then((text) => {
        const js =
          metric(text, 'nodejs_heap_size_total_bytes') + metric(text, 'nodejs_external_memory_bytes');
        if (Number.isFinite(js)) jsMemory.push(js / 2 ** 20);
      })
      .catch(() => {
        /* not up yet */
      });
  }, 2000);
  try {
    // The clock starts at the spawn (startup and group join included) and, for the streaming rate
    // alone, at the first poll that counts any record.
    let first = { at: 0, counted: 0, cpu: NaN };
    let counted = 0;
    while (counted < o.total) {
      await new Promise((r) => setTimeout(r, 250));
      if (exited) throw new Error(`the worker exited (code ${child.exitCode}) after ${counted} records`);
      const n = await o.count(port);
      if (n === undefined) continue;
      counted = n;
      if (!first.at && counted > 0) first = { at: Date.now(), counted, cpu: processCpuSeconds(child.pid) };
    }
    const doneAt = Date.now();
    const cpuUsPerRecord = ((processCpuSeconds(child.pid) - first.cpu) * 1e6) / (o.total - first.counted);
    await o.check?.(port);
    const e2eFromSpawn = o.total / ((doneAt - spawnedAt) / 1000);
    // If everything was counted at the first poll, the streaming rate is unknown: the spawn figure stands.
    const e2e =
      first.counted < o.total ? (o.total - first.counted) / ((doneAt - first.at) / 1000) : e2eFromSpawn;
    return { e2e, e2eFromSpawn, rss, jsMemory, cpuUsPerRecord, dataDir };
  } finally {
    clearInterval(sampler);
    clearInterval(metricsSampler);
    if (!exited) child.kill('SIGTERM');
    await exit;
  }
}

/**
 * Records of `listId` through the worker's stats API over the bench data's year (sends, opens, clicks,
 * purchases), with API key `key`; undefined while the API is not up or does not know the key's user yet.
 */
export async function statsTotal(
  port: number,
  key: string,
  listId: number,
  today: string,
): Promise<number | undefined> {
  const from = new Date(Date.parse(today) - (BENCH.days - 1) * 86_400_000).toISOString().slice(0, 10);
  const url = `http://127.0.0.1:${port}/api/1.2/rest/1/${key}/automation.stats.json?list_id=${listId}&start_date=${from}&stop_date=${today}`;
  try {
    const res = await fetch(url);
    if (res.status !== 200) return undefined;
    const days = (await res.json()) as {
      sends_total: number;
      opens_total: number;
      clicks_total: number;
      purchase_count: number;
    }[];
    return days.reduce((a, d) => a + d.sends_total + d.opens_total + d.clicks_total + d.purchase_count, 0);
  } catch {
    return undefined; // the API is not up yet
  }
}
